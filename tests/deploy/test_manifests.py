"""deploy/kubernetes, checked offline (no API server runs here): core kinds against Kubernetes'
own OpenAPI schemas (kubernetes-validate, strict: an unknown field fails), and the RayCluster
against the fields of KubeRay's ray.io/v1 CRD, its pod templates as real PodTemplateSpecs."""
from __future__ import annotations

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
