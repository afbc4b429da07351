"""deploy/kubernetes, checked offline (no API server runs here): core kinds against Kubernetes'
own OpenAPI schemas (kubernetes-validate, strict: an unknown field fails), and the RayCluster
against the fields of KubeRay's ray.io/v1 CRD, its pod templates as real PodTemplateSpecs."""
from __future__ import annotations

import asyncio
import copy
import json
import os
import random
import re
import shlex
import shutil
import signal
import socket
import subprocess

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.deploy.docker import ROOT
from tests.helpers import until_sync

MANIFESTS = sorted((ROOT / "deploy/kubernetes").glob("*.yaml"))
K8S = kubernetes_validate.latest_version()

# The ray.io/v1 RayCluster fields of KubeRay's CRD (ray-operator/config/crd/bases/
# ray.io_rayclusters.yaml), minus the embedded PodTemplateSpecs, which are checked against
# Kubernetes' schema below. Checked field by field against the CRD of KubeRay 1.0 and the
# RayCluster spec embedded in the ~1.4 RayCronJob CRD, plus the 1.6 API reference's additions
# (upgradeStrategy, authOptions.secretName, the groups' resources and labels). No minimums on the
# replica counts: the CRD has none (int32 with defaults). Unknown fields fail, as the API server's
# strict field validation (kubectl >= 1.27) refuses them and its pruning would drop them.
_STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
_TEMPLATE = {"type": "object"}
_GROUP = {"rayStartParams": _STRINGS, "template": _TEMPLATE, "resources": _STRINGS,
          "labels": _STRINGS}
RAYCLUSTER = {
    "type": "object",
    "properties": {
        "apiVersion": {"const": "ray.io/v1"}, "kind": {"const": "RayCluster"},
        "metadata": {"type": "object", "required": ["name"]},
        "spec": {
            "type": "object", "additionalProperties": False, "required": ["headGroupSpec"],
            "properties": {
                "rayVersion": {"type": "string"},
                "authOptions": {"type": "object", "properties": {
                    "mode": {"enum": ["disabled", "token"]},
                    "enableK8sTokenAuth": {"type": "boolean"},
                    "secretName": {"type": "string"}}},
                "enableInTreeAutoscaling": {"type": "boolean"},
                "autoscalerOptions": {"type": "object", "properties": {
                    "upscalingMode": {"enum": ["Default", "Aggressive", "Conservative"]},
                    "idleTimeoutSeconds": {"type": "integer"},
                    "version": {"enum": ["v1", "v2"]}}},
                "gcsFaultToleranceOptions": {"type": "object", "required": ["redisAddress"]},
                "headServiceAnnotations": _STRINGS,
                "managedBy": {"enum": ["ray.io/kuberay-operator", "kueue.x-k8s.io/multikueue"]},
                "suspend": {"type": "boolean"},
                "upgradeStrategy": {"type": "object", "properties": {
                    "type": {"enum": ["Recreate", "None"]}}},
                "headGroupSpec": {
                    "type": "object", "additionalProperties": False, "required": ["template"],
                    "properties": {**_GROUP, "serviceType": {"type": "string"},
                                   "headService": {"type": "object"},
                                   "enableIngress": {"type": "boolean"}}},
                "workerGroupSpecs": {"type": "array", "items": {
                    "type": "object", "additionalProperties": False,
                    "required": ["groupName", "template"],  # min/maxReplicas have defaults
                    "properties": {**_GROUP, "groupName": {"type": "string"},
                                   "replicas": {"type": "integer"},
                                   "minReplicas": {"type": "integer"},
                                   "maxReplicas": {"type": "integer"},
                                   "numOfHosts": {"type": "integer"},
                                   "idleTimeoutSeconds": {"type": "integer"},
                                   "suspend": {"type": "boolean"},
                                   "scaleStrategy": {"type": "object", "properties": {
                                       "workersToDelete": {"type": "array",
                                                           "items": {"type": "string"}}}}}}},
            },
        },
    },
}


def documents() -> list[tuple[str, dict]]:
    return [(f"{path.name}#{i}", doc) for path in MANIFESTS
            for i, doc in enumerate(yaml.safe_load_all(path.read_text())) if doc]


def test_every_manifest_is_one_of_the_known_kinds():
    kinds = sorted(doc["kind"] for _, doc in documents())
    assert kinds == ["ConfigMap", "Deployment", "Deployment", "Ingress", "Job",
                     "PodDisruptionBudget", "RayCluster", "Service", "Service", "Service",
                     "StatefulSet"]


@pytest.mark.parametrize("where, doc", [d for d in documents() if d[1]["kind"] != "RayCluster"],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_core_kinds_match_the_kubernetes_schema(where, doc):
    kubernetes_validate.validate(doc, K8S, strict=True)


def pod_templates(cluster: dict) -> list[dict]:
    spec = cluster["spec"]
    return [spec["headGroupSpec"]["template"], *(g["template"] for g in spec["workerGroupSpecs"])]


def test_the_raycluster_matches_kuberays_crd_and_its_pods_kubernetes():
    (cluster,) = [doc for _, doc in documents() if doc["kind"] == "RayCluster"]
    jsonschema.validate(cluster, RAYCLUSTER)
    for template in pod_templates(cluster):
        kubernetes_validate.validate({"apiVersion": "v1", "kind": "PodTemplate",
                                      "metadata": {"name": "check"}, "template": template},
                                     K8S, strict=True)
    worker = cluster["spec"]["workerGroupSpecs"][0]
    assert "werewolf_host" in worker["rayStartParams"]["resources"]


def test_the_game_host_group_is_elastic_in_room_slots_of_whole_hosts():
    """KubeRay's autoscaler is on, with room to grow and shrink, and a pod's room slots hold
    whole hosts of the gateways' WW_GAMES_PER_ACTOR (docs/capacity.md, "Elastic")."""
    (cluster,) = [doc for _, doc in documents() if doc["kind"] == "RayCluster"]
    assert cluster["spec"]["enableInTreeAutoscaling"] is True
    assert cluster["spec"]["autoscalerOptions"]["idleTimeoutSeconds"] > 0
    (worker,) = cluster["spec"]["workerGroupSpecs"]
    assert 1 <= worker["minReplicas"] <= worker["replicas"] < worker["maxReplicas"]
    slots = json.loads(json.loads(worker["rayStartParams"]["resources"]))["werewolf_host"]
    (deployment,) = [doc for _, doc in documents() if doc["kind"] == "Deployment"
                     and doc["metadata"]["name"] == "werewolf-gateway"]
    env = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]
           ["containers"][0]["env"]}
    per_host = int(env["WW_GAMES_PER_ACTOR"])
    assert env["WW_HOST_RESOURCE"] == "werewolf_host"
    assert slots % per_host == 0 and slots // per_host > int(env["WW_WARM_ACTORS"])


def test_a_misspelt_field_fails_the_checks():
    """The checks can fail: a typo in a core kind and in the RayCluster are both caught."""
    (_, deployment) = next(d for d in documents() if d[1]["kind"] == "Deployment")
    broken = copy.deepcopy(deployment)
    broken["spec"]["replica"] = broken["spec"].pop("replicas")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S, strict=True)
    (cluster,) = [doc for _, doc in documents() if doc["kind"] == "RayCluster"]
    broken = copy.deepcopy(cluster)
    broken["spec"]["workerGroupSpecs"][0]["maxReplica"] = 3
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, RAYCLUSTER)
    broken = copy.deepcopy(cluster)
    broken["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["imagePullPolcy"] = "x"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate({"apiVersion": "v1", "kind": "PodTemplate",
                                      "metadata": {"name": "check"},
                                      "template": pod_templates(broken)[0]}, K8S, strict=True)


# Per-client limits behind the balancer ----------------------------------------------------------
# The gateways count their abuse limits per client address (gateway/limits.py), and behind a
# balancer every connection comes from the balancer: it must name the client (X-Forwarded-For) and
# the gateways must believe it from the balancer only (uvicorn's FORWARDED_ALLOW_IPS).

def haproxy_sections() -> dict[str, list[str]]:
    """deploy/haproxy/haproxy.cfg's sections ("defaults", "frontend werewolf", ...) and their
    directives, comments dropped."""
    sections: dict[str, list[str]] = {}
    current = None
    for raw in (ROOT / "deploy/haproxy/haproxy.cfg").read_text().splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line[0].isspace():
            current = line.strip()
            sections[current] = []
        else:
            sections[current].append(" ".join(line.split()))
    return sections


def test_haproxy_names_the_client_and_drops_what_the_client_wrote():
    sections = haproxy_sections()
    # In `defaults`: every backend (HTTP and the /ws/ sockets) adds the address HAProxy saw.
    assert "option forwardfor" in sections["defaults"]  # never `if-none`: a client could set it
    assert not any("forwardfor" in d and "if-none" in d for s in sections.values() for d in s)
    frontends = [name for name in sections if name.startswith("frontend ")]
    assert frontends
    for name in frontends:
        assert "http-request del-header X-Forwarded-For" in sections[name], name
        assert any(d.startswith("http-request set-header X-Forwarded-Proto")
                   for d in sections[name])
        # the metrics tell rooms and traffic: Prometheus scrapes the replicas, not the balancer
        # (every spelling of the path: test_haproxy.py)
        assert any(d.startswith("http-request deny deny_status 404 if { path,url_dec,lower")
                   and "metrics" in d for d in sections[name])


def gateway_container() -> dict:
    (deployment,) = [doc for _, doc in documents() if doc["kind"] == "Deployment"
                     and doc["metadata"]["name"] == "werewolf-gateway"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


def forwarded_allow_ips() -> dict[str, str]:
    """The FORWARDED_ALLOW_IPS each shipped gateway setup gives uvicorn."""
    env = {e["name"]: e.get("value") for e in gateway_container()["env"]}
    unit = (ROOT / "deploy/systemd/werewolf-gateway.service").read_text()
    assert "EnvironmentFile=/etc/werewolf/env" in unit.splitlines()
    example = dict(line.split("=", 1) for line in
                   (ROOT / "deploy/systemd/env.example").read_text().splitlines()
                   if line and not line.startswith("#"))
    return {"kubernetes": env.get("FORWARDED_ALLOW_IPS"),
            "systemd": example.get("FORWARDED_ALLOW_IPS")}


def test_kubernetes_gateways_start_only_with_a_metrics_token_from_a_secret():
    container = gateway_container()
    (token,) = [e for e in container["env"] if e["name"] == "WW_METRICS_TOKEN"]
    assert "value" not in token and token["valueFrom"]["secretKeyRef"]["key"]
    script = container["args"][0].replace("ray start", "exit 0 #")  # the checks alone
    for value, code in (("", 1), ("a-token", 0)):
        ran = subprocess.run(["sh", "-c", script], capture_output=True, timeout=10, env={
            "PATH": os.environ["PATH"], "REDIS_URL": "redis://r", "WW_METRICS_TOKEN": value})
        assert ran.returncode == code, (value, ran.stderr)


def test_the_systemd_gateway_refuses_an_unset_or_placeholder_metrics_token():
    example = dict(line.split("=", 1) for line in
                   (ROOT / "deploy/systemd/env.example").read_text().splitlines()
                   if line and not line.startswith("#"))
    unit = (ROOT / "deploy/systemd/werewolf-gateway.service").read_text()
    (check,) = [line.split("=", 1)[1] for line in unit.splitlines()
                if line.startswith("ExecStartPre=")]
    # systemd turns `$$` into `$` and hands the rest to the program named
    argv = shlex.split(check.replace("$$", "$"))
    for value, code in (("", 1), (example["WW_METRICS_TOKEN"], 1), ("a-token", 0)):
        ran = subprocess.run(argv, capture_output=True, timeout=10,
                             env={"PATH": os.environ["PATH"], "WW_METRICS_TOKEN": value})
        assert ran.returncode == code, (value, ran.stderr)


def test_prometheus_scrapes_the_gateways_with_their_token():
    config = yaml.safe_load((ROOT / "deploy/prometheus/prometheus.yml").read_text())
    (job,) = [j for j in config["scrape_configs"] if j["job_name"] == "werewolf-gateway"]
    assert job["authorization"]["credentials_file"]


@pytest.mark.parametrize("setup", ["kubernetes", "systemd"])
def test_the_gateways_believe_the_client_address_from_the_balancer_only(setup):
    """Set, to addresses or networks (never `*`, which would believe any client); and the
    installed uvicorn, given that value, takes the address the balancer added (the right-most it
    does not trust), not one a client wrote, and ignores the header from anyone else."""
    import ipaddress

    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    value = forwarded_allow_ips()[setup]
    assert value, f"{setup}: FORWARDED_ALLOW_IPS is not set"
    networks = [ipaddress.ip_network(item.strip()) for item in value.split(",")]  # no "*"
    balancer = str(next(iter(networks[0].hosts()), networks[0].network_address))

    async def seen(peer: str, forwarded: str) -> str:
        got = {}

        async def app(scope, receive, send):
            got["client"] = scope["client"][0]
        scope = {"type": "http", "client": (peer, 40000), "scheme": "http",
                 "headers": [(b"x-forwarded-for", forwarded.encode())]}
        await ProxyHeadersMiddleware(app, trusted_hosts=value)(scope, None, None)
        return got["client"]

    forged_then_real = "198.51.100.7, 203.0.113.5"  # a client's own header, then the balancer's
    assert asyncio.run(seen(balancer, forged_then_real)) == "203.0.113.5"
    assert asyncio.run(seen(balancer, "203.0.113.5")) == "203.0.113.5"
    assert asyncio.run(seen("192.0.2.1", "198.51.100.7")) == "192.0.2.1"  # not the balancer


# The sharded Redis (redis-cluster.yaml) -----------------------------------------------------
# A StatefulSet of nodes, a Job that forms them into a cluster, and the scripts of a ConfigMap that
# both run; every node and every client reads one Secret value, the REDIS_URL.

def redis_cluster() -> dict[str, dict]:
    docs = [doc for where, doc in documents() if where.startswith("redis-cluster.yaml#")]
    kinds = {doc["kind"]: doc for doc in docs}
    assert len(kinds) == len(docs)
    return kinds


def container(pod_spec: dict) -> dict:
    (only,) = pod_spec["containers"]
    return only


def env_of(container_spec: dict) -> dict[str, dict]:
    return {e["name"]: e for e in container_spec.get("env", [])}


def secret_ref(container_spec: dict, name: str = "REDIS_URL") -> tuple[str, str]:
    ref = env_of(container_spec)[name]["valueFrom"]["secretKeyRef"]
    assert not ref.get("optional"), "a missing Secret must stop the pod, not start it without"
    return ref["name"], ref["key"]


def mount_of(pod_spec: dict, kind: str) -> str:
    """Where the container mounts the volume of `kind` (configMap, emptyDir, or data: the
    StatefulSet's claim)."""
    volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
    for mount in container(pod_spec)["volumeMounts"]:
        volume = volumes.get(mount["name"], {"data": {}})
        if kind in volume:
            return mount["mountPath"]
    raise AssertionError(f"no {kind} volume mounted")


def test_the_job_forms_exactly_the_statefulsets_pods_into_primaries_with_a_replica_each():
    cluster = redis_cluster()
    sts, service, job = cluster["StatefulSet"], cluster["Service"], cluster["Job"]
    pod = sts["spec"]["template"]["spec"]
    redis = container(pod)
    port = next(p["containerPort"] for p in redis["ports"] if p["name"] == "client")
    bus = next(p["containerPort"] for p in redis["ports"] if p["name"] == "bus")
    assert bus == port + 10000  # Redis' fixed bus offset (no cluster-port set)
    assert sorted(p["port"] for p in service["spec"]["ports"]) == [port, bus]
    # The pods' DNS names: headless, named by the StatefulSet, published before readiness (a
    # restarting node resolves its peers before it is ready, the Job before they are formed).
    assert service["spec"]["clusterIP"] == "None" and service["spec"]["publishNotReadyAddresses"]
    assert sts["spec"]["serviceName"] == service["metadata"]["name"]
    labels = sts["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"] == labels == sts["spec"]["selector"]["matchLabels"]
    assert cluster["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"] == labels
    assert cluster["PodDisruptionBudget"]["spec"]["maxUnavailable"] == 1

    job_env = env_of(container(job["spec"]["template"]["spec"]))
    nodes = job_env["NODES"]["value"].split()
    per_primary = int(job_env["REPLICAS_PER_PRIMARY"]["value"])
    assert per_primary == 1 and len(nodes) % (1 + per_primary) == 0
    primaries = len(nodes) // (1 + per_primary)
    replicas = sts["spec"]["replicas"]
    assert replicas == 2 * primaries == 6
    name, domain = sts["metadata"]["name"], service["metadata"]["name"]
    assert nodes == [f"{name}-{i}.{domain}:{port}" for i in range(replicas)]
    create = cluster["ConfigMap"]["data"]["create.sh"]
    assert ('redis-cli --cluster create $NODES --cluster-replicas "$REPLICAS_PER_PRIMARY" '
            "--cluster-yes") in create
    # Each node announces the name the Job and the clients use (start.sh: $POD_NAME.$SERVICE).
    assert env_of(redis)["SERVICE"]["value"] == domain
    assert env_of(redis)["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert env_of(redis)["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    start = cluster["ConfigMap"]["data"]["start.sh"]
    assert "cluster-announce-hostname $POD_NAME.$SERVICE" in start
    # The example URL of the manifest's header names nodes of the list.
    header = (ROOT / "deploy/kubernetes/redis-cluster.yaml").read_text().split("apiVersion:")[0]
    (example,) = re.findall(r'url="redis\+cluster://:\$PASSWORD@([^"]+)"', header)
    assert set(example.split(",")) <= set(nodes)


def redis_conf() -> dict[str, str]:
    text = redis_cluster()["ConfigMap"]["data"]["redis.conf"]
    return dict(line.split(None, 1) for line in text.splitlines()
                if line.strip() and not line.startswith("#"))


def test_the_nodes_config_is_the_capacity_models_durable_shard():
    cluster = redis_cluster()
    pod = cluster["StatefulSet"]["spec"]["template"]["spec"]
    conf = redis_conf()
    data = mount_of(pod, "data")
    assert conf["cluster-enabled"] == "yes" and conf["cluster-node-timeout"] == "5000"
    assert conf["cluster-config-file"].startswith(data + "/") and conf["dir"] == data
    assert (conf["appendonly"], conf["appendfsync"]) == ("yes", "everysec")
    assert conf["maxmemory-policy"] == "noeviction"
    assert conf["cluster-preferred-endpoint-type"] == "hostname"
    assert conf["include"].startswith(mount_of(pod, "emptyDir") + "/")
    assert pod["volumes"][0]["configMap"]["name"] == cluster["ConfigMap"]["metadata"]["name"]
    assert mount_of(pod, "configMap") == "/etc/redis-cluster"
    assert mount_of(cluster["Job"]["spec"]["template"]["spec"], "configMap") == "/etc/redis-cluster"
    assert container(pod)["resources"]["requests"]["cpu"] == "1"  # docs/capacity.md: a core a shard
    anti = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert anti[0]["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"


def test_every_cluster_pod_takes_its_password_from_the_key_the_gateways_use():
    (gateway,) = [doc for _, doc in documents() if doc["kind"] == "Deployment"
                  and doc["metadata"]["name"] == "werewolf-gateway"]
    (ray,) = [doc for _, doc in documents() if doc["kind"] == "RayCluster"]
    key = secret_ref(container(gateway["spec"]["template"]["spec"]))
    assert key == ("werewolf-redis", "url")
    assert "--redis-url" not in " ".join(container(gateway["spec"]["template"]["spec"])["args"])
    for group in ray["spec"]["workerGroupSpecs"]:
        assert secret_ref(container(group["template"]["spec"])) == key
    cluster = redis_cluster()
    for owner in (cluster["StatefulSet"], cluster["Job"]):
        assert secret_ref(container(owner["spec"]["template"]["spec"])) == key
    # Every script that talks to a node takes the password from that value, and start.sh makes it
    # the node's requirepass and masterauth.
    scripts = cluster["ConfigMap"]["data"]
    for name in ("start.sh", "ready.sh", "prestop.sh", "create.sh"):
        assert "$(sh /etc/redis-cluster/url-password.sh)" in scripts[name], name
    assert '"requirepass $password" "masterauth $password"' in scripts["start.sh"]
    assert not {"requirepass", "masterauth"} & set(redis_conf())  # no second, written password


def url_password(url: str) -> subprocess.CompletedProcess:
    script = redis_cluster()["ConfigMap"]["data"]["url-password.sh"]
    return subprocess.run(["sh", "-c", script], env={"REDIS_URL": url, "PATH": os.environ["PATH"]},
                          capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("credentials", [":3f9a0c", "default:3f9a0c", ":A-b.c_d~9"])
def test_the_nodes_read_the_password_the_clients_send(credentials):
    from actors.redis_connect import parse_cluster_url

    url = f"redis+cluster://{credentials}@n0.svc:6379,n1.svc:6379"
    done = url_password(url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == parse_cluster_url(url)[1]["password"]


@pytest.mark.parametrize("url", ["redis+cluster://n0.svc:6379", "redis+cluster://:@n0.svc:6379",
                                 "redis+cluster://:pa%40ss@n0.svc:6379",  # the client unescapes
                                 "redis://user@n0.svc:6379/0"])
def test_a_url_the_nodes_cannot_read_a_password_from_stops_them(url):
    done = url_password(url)
    assert done.returncode != 0 and "werewolf-redis" in done.stderr and not done.stdout


# The ConfigMap's scripts on real redis-server: six "pods" on loopback addresses of their own, a
# stub getent for the pods' DNS names and a redis-cli that maps those names (and defaults to its
# pod, as in the pod), the paths moved into a temporary directory.

def _redis_7() -> bool:
    if not shutil.which("redis-server"):
        return False
    version = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout
    found = re.search(r"v=(\d+)\.", version)
    return bool(found) and int(found.group(1)) >= 7


def _free_port_pair() -> int:
    """A port free on every address, and its bus port (+10000)."""
    for _ in range(100):
        port = random.randint(20000, 55000)
        try:
            for p in (port, port + 10000):
                with socket.socket() as s:
                    s.bind(("", p))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair")


class Pods:
    """The StatefulSet's pods as local processes running its start.sh."""

    def __init__(self, root, port: int):
        self.root, self.port = root, port
        self.cluster = redis_cluster()
        self.sts = self.cluster["StatefulSet"]
        self.count = self.sts["spec"]["replicas"]
        self.names = [f"{self.sts['metadata']['name']}-{i}.{self.sts['spec']['serviceName']}"
                      for i in range(self.count)]
        self.password = "%032x" % random.getrandbits(128)
        self.url = f"redis+cluster://:{self.password}@{self.names[0]}:6379"
        self.octet = random.randint(10, 250)  # 127.<octet>.<generation>.<i + 1>
        self.ips: list[str] = []
        self.processes: dict[int, subprocess.Popen] = {}
        (root / "bin").mkdir()
        (root / "hosts").write_text("")
        (root / "bin/getent").write_text(
            '#!/bin/sh\nip=$(awk -v n="$2" \'$2 == n { print $1 }\' "$HOSTS")\n'
            '[ -n "$ip" ] || exit 2\necho "$ip $2"\n')
        (root / "bin/redis-cli").write_text(
            '#!/bin/bash\nargs=()\nfor a in "$@"; do\n  while read -r ip name; do\n'
            '    if [ "$a" = "$name" ]; then a=$ip;\n'
            '    elif [ "${a%:*}" = "$name" ]; then a=$ip:${a##*:}; fi\n'
            '  done < "$HOSTS"\n  args+=("$a")\ndone\n'
            f'exec {shutil.which("redis-cli")} -h "$POD_IP" -p {port} "${{args[@]}}"\n')
        for tool in ("getent", "redis-cli"):
            (root / "bin" / tool).chmod(0o755)
        for i in range(self.count):
            etc = root / f"etc-{i}"
            etc.mkdir()
            (root / f"data-{i}").mkdir()
            (root / f"run-{i}").mkdir()
            for name, text in self.cluster["ConfigMap"]["data"].items():
                text = (text.replace("/etc/redis-cluster", str(etc))
                        .replace("/data", str(root / f"data-{i}"))
                        .replace("/run/redis", str(root / f"run-{i}"))
                        .replace("port 6379", f"port {port}"))
                (etc / name).write_text(text)

    def env(self, i: int, **extra) -> dict[str, str]:
        return {"PATH": f"{self.root / 'bin'}:{os.environ['PATH']}",
                "HOSTS": str(self.root / "hosts"),
                "POD_NAME": self.names[i].split(".")[0], "POD_IP": self.ips[i],
                "SERVICE": self.sts["spec"]["serviceName"], "REDIS_URL": self.url, **extra}

    def start(self, generation: int) -> None:
        """Every pod started at once, each on a new address."""
        self.ips = [f"127.{self.octet}.{generation}.{i + 1}" for i in range(self.count)]
        (self.root / "hosts").write_text("".join(f"{ip} {name}\n"
                                                 for ip, name in zip(self.ips, self.names)))
        for i in range(self.count):
            conf = self.root / f"etc-{i}/redis.conf"
            conf.write_text(re.sub(r"(?m)^bind .*$", f"bind {self.ips[i]}", conf.read_text()))
            log = open(self.root / f"log-{i}", "ab")
            self.processes[i] = subprocess.Popen(["sh", str(self.root / f"etc-{i}/start.sh")],
                                                 env=self.env(i), stdout=log,
                                                 stderr=subprocess.STDOUT, start_new_session=True)
            log.close()

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.processes.clear()

    def script(self, i: int, name: str, **extra) -> subprocess.CompletedProcess:
        return subprocess.run(["sh", str(self.root / f"etc-{i}/{name}")], env=self.env(i, **extra),
                              capture_output=True, text=True, timeout=180)

    def cli(self, i: int, *args: str) -> str:
        return subprocess.run(["redis-cli", *args], env=self.env(i, REDISCLI_AUTH=self.password),
                              capture_output=True, text=True, timeout=30).stdout.replace("\r", "")

    def wait_ready(self, timeout: float = 90.0) -> None:
        def ready() -> bool:  # the nodes' own readiness script
            return all(self.script(i, "ready.sh").returncode == 0 for i in range(self.count))

        def logs() -> str:
            tails = {i: (self.root / f"log-{i}").read_text()[-600:] for i in range(self.count)}
            return f"every node ready ({tails})"
        until_sync(ready, timeout, logs, every=1)


@pytest.mark.e2e
@pytest.mark.skipif(not _redis_7(), reason="needs redis-server 7")
def test_the_scripts_form_a_cluster_that_survives_every_pod_restarting_on_a_new_address(tmp_path):
    pods = Pods(tmp_path, _free_port_pair())
    job = container(pods.cluster["Job"]["spec"]["template"]["spec"])
    job_env = {name: e["value"] for name, e in env_of(job).items() if "value" in e}
    job_env["NODES"] = job_env["NODES"].replace(":6379", f":{pods.port}")
    try:
        pods.start(generation=1)
        formed = pods.script(0, "create.sh", **job_env)
        assert formed.returncode == 0, formed.stdout + formed.stderr
        assert "All 16384 slots covered" in formed.stdout
        again = pods.script(0, "create.sh", **job_env)  # the Job run again: nothing changes
        assert again.returncode == 0 and "already formed" in again.stdout, \
            again.stdout + again.stderr
        pods.wait_ready()
        # Clients are given the pods' names, not their addresses.
        assert pods.names[1] in pods.cli(0, "cluster", "slots")
        assert re.search(r"MOVED \d+ werewolf-redis-cluster-\d\.werewolf-redis-cluster:",
                         "".join(pods.cli(i, "set", "{room}k", "v") for i in range(pods.count)))
        (holder,) = [i for i in range(pods.count) if pods.cli(i, "get", "{room}k").strip() == "v"]
        # A primary stopping hands its slots to its replica first.
        stopped = pods.script(holder, "prestop.sh")
        assert stopped.returncode == 0, stopped.stderr
        assert "role:slave" in pods.cli(holder, "info", "replication")
        # Every pod restarted at once, every address new: they find each other by name.
        pods.stop()
        pods.start(generation=2)
        pods.wait_ready()
        assert all("cluster_state:ok" in pods.cli(i, "cluster", "info") for i in range(pods.count))
        assert [pods.cli(i, "get", "{room}k").strip() for i in range(pods.count)].count("v") == 1
        assert "not resolved" not in "".join((tmp_path / f"log-{i}").read_text()
                                             for i in range(pods.count))
    finally:
        pods.stop()
