"""deploy/kubernetes, checked offline (no API server runs here): core kinds against Kubernetes'
own OpenAPI schemas (kubernetes-validate, strict: an unknown field fails), and the RayCluster
against the fields of KubeRay's ray.io/v1 CRD, its pod templates as real PodTemplateSpecs."""
from __future__ import annotations

import asyncio
import copy

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.deploy.docker import ROOT

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
_GROUP = {"rayStartParams": _STRINGS, "template": _TEMPLATE, "resources": _STRINGS, "labels": _STRINGS}
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
    assert kinds == ["Deployment", "Deployment", "Ingress", "RayCluster", "Service", "Service"]


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
        assert any(d.startswith("http-request set-header X-Forwarded-Proto") for d in sections[name])
        # the metrics tell rooms and traffic: Prometheus scrapes the replicas, not the balancer
        assert "http-request deny deny_status 404 if { path_beg /metrics }" in sections[name]


def forwarded_allow_ips() -> dict[str, str]:
    """The FORWARDED_ALLOW_IPS each shipped gateway setup gives uvicorn."""
    (deployment,) = [doc for _, doc in documents() if doc["kind"] == "Deployment"
                     and doc["metadata"]["name"] == "werewolf-gateway"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    unit = (ROOT / "deploy/systemd/werewolf-gateway.service").read_text()
    assert "EnvironmentFile=/etc/werewolf/env" in unit.splitlines()
    example = dict(line.split("=", 1) for line in
                   (ROOT / "deploy/systemd/env.example").read_text().splitlines()
                   if line and not line.startswith("#"))
    return {"kubernetes": env.get("FORWARDED_ALLOW_IPS"),
            "systemd": example.get("FORWARDED_ALLOW_IPS")}


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
