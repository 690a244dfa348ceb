"""The Kubernetes manifests: valid for the API server, and wired to each other and to the service.

Built-in objects are checked against the Kubernetes JSON schemas of `kubernetes-validate`
(strict: an unknown field is an error), at the oldest Kubernetes deploy/README.md claims and at the
newest the package ships. The custom resources (CloudNativePG's Cluster, Pooler and
ScheduledBackup, the Prometheus Operator's ServiceMonitor, and the restore example's Cluster) are
checked by the validators that kubernetes-models
compiles from those projects' CRDs (tests/deploy/crd, installed by `make test`); those
schemas accept fields they do not know, so types, enums and required fields are caught there,
misspelt field names are not.

The migration Job (migrate.yaml) is checked as the Deployment is, and for its place in an
upgrade: it is named after the release, it alone carries the label deploy/README.md's upgrade
applies first, and the walk-through waits for it before it applies the rest.
"""

import copy
import json
import re
import secrets
import shlex
import shutil
import socket
import subprocess
import tomllib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml
from dockerfile_parse import DockerfileParser

from service.config import ConfigError, load_settings
from tests.conftest import service_and_app
from tests.http import Api

REPO = Path(__file__).resolve().parents[2]
K8S = REPO / "deploy/k8s"
CRD_VALIDATOR = Path(__file__).parent / "crd"
SECRET_TEMPLATE = "secret.template.yaml"
APP_SECRET = "cryptid-backend"
RESTORE_EXAMPLE = K8S / "examples" / "restore.yaml"
README = REPO / "deploy" / "README.md"
# How deploy/README.md#upgrading applies the migration Job alone: `kubectl apply -l`.
MIGRATE_SELECTOR = ("app.kubernetes.io/component", "migrate")
MIN_KUBERNETES = "1.29"
CUSTOM_GROUPS = ("postgresql.cnpg.io/", "monitoring.coreos.com/")
# What an operator puts in TRUSTED_PROXIES: its ingress controller's pods.
INGRESS_PODS = "10.42.3.17/32,10.42.5.9/32"

Manifest = dict[str, Any]
CrdCheck = Callable[[list[Manifest]], list[str | None]]


def load(name: str) -> list[Manifest]:
    return [doc for doc in yaml.safe_load_all((K8S / name).read_text()) if doc]


def kustomization() -> Manifest:
    (document,) = load("kustomization.yaml")
    return document


def applied() -> list[Manifest]:
    """Every object `kubectl apply -k deploy/k8s` creates, in the kustomization's order."""
    return [doc for name in kustomization()["resources"] for doc in load(name)]


def every_object() -> list[Manifest]:
    return [*applied(), *load(SECRET_TEMPLATE)]


def one(kind: str, name: str | None = None) -> Manifest:
    (found,) = [
        doc
        for doc in every_object()
        if doc["kind"] == kind and name in (None, doc["metadata"]["name"])
    ]
    return found


def is_custom(manifest: Manifest) -> bool:
    return str(manifest["apiVersion"]).startswith(CUSTOM_GROUPS)


def container(kind: str = "Deployment") -> Manifest:
    """The one container of the Deployment's pods, or of the migration Job's."""
    (app,) = one(kind)["spec"]["template"]["spec"]["containers"]
    return app


def environment(secrets: dict[tuple[str, str], str], kind: str = "Deployment") -> dict[str, str]:
    """The container's environment as the kubelet builds it, with the given Secret values."""
    config = one("ConfigMap")
    env: dict[str, str] = {}
    for source in container(kind)["envFrom"]:
        assert source["configMapRef"]["name"] == config["metadata"]["name"]
        env.update(config["data"])
    for variable in container(kind)["env"]:
        if "value" in variable:
            # $(NAME) expands to a variable defined before this one, as the kubelet does.
            env[variable["name"]] = re.sub(
                r"\$\((\w+)\)", lambda ref: env[ref.group(1)], variable["value"]
            )
        else:
            ref = variable["valueFrom"]["secretKeyRef"]
            env[variable["name"]] = secrets[(ref["name"], ref["key"])]
    return env


def secret_refs(kind: str = "Deployment") -> dict[str, tuple[str, str]]:
    return {
        variable["name"]: (
            variable["valueFrom"]["secretKeyRef"]["name"],
            variable["valueFrom"]["secretKeyRef"]["key"],
        )
        for variable in container(kind)["env"]
        if "valueFrom" in variable
    }


def cores(quantity: str) -> float:
    return int(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)


def kubernetes_errors(manifest: Manifest, version: str) -> str | None:
    try:
        kubernetes_validate.validate(manifest, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        return f"{exc.message} at {list(exc.absolute_path)}"
    return None


@pytest.fixture(scope="module")
def crd_errors() -> CrdCheck:
    """Per object: None, or why its CRD's schema refuses it."""
    node = shutil.which("node")
    if node is None or not (CRD_VALIDATOR / "node_modules").is_dir():
        # `make test` installs it; skipping would let a broken custom resource through.
        pytest.fail(
            "the CRD validator needs Node.js and its packages: `make test` runs"
            " `npm ci --prefix tests/deploy/crd`"
        )

    def check(manifests: list[Manifest]) -> list[str | None]:
        done = subprocess.run(
            [node, str(CRD_VALIDATOR / "validate.mjs")],
            input=json.dumps(manifests),
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        result: list[str | None] = json.loads(done.stdout)
        return result

    return check


def test_the_kustomization_applies_every_manifest_but_the_secret_template() -> None:
    listed = kustomization()["resources"]
    on_disk = {path.name for path in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert len(listed) == len(set(listed))
    assert set(listed) == on_disk - {SECRET_TEMPLATE}
    # One image, set by the kustomization on the instances and on the migration Job alike.
    assert [image["name"] for image in kustomization()["images"]] == [container()["image"]]
    assert container("Job")["image"] == container()["image"]


@pytest.mark.parametrize("version", [MIN_KUBERNETES, kubernetes_validate.utils.latest_version()])
def test_every_built_in_object_is_valid_for_kubernetes(version: str) -> None:
    built_in = [doc for doc in every_object() if not is_custom(doc)]
    assert {doc["kind"] for doc in built_in} == {
        "ConfigMap",
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "Job",
        "Secret",
    }
    errors = {doc["kind"]: kubernetes_errors(doc, version) for doc in built_in}
    assert errors == dict.fromkeys(errors)


def test_every_custom_resource_is_valid_against_its_crd(crd_errors: CrdCheck) -> None:
    custom = [doc for doc in every_object() if is_custom(doc)]
    kinds = ["Cluster", "Pooler", "ScheduledBackup", "ServiceMonitor"]
    assert [doc["kind"] for doc in custom] == kinds
    assert crd_errors(custom) == [None] * len(kinds)


def broken(manifest: Manifest, path: str, value: Any) -> Manifest:
    """A copy of the manifest with the value at a dotted path (list indices as numbers) replaced."""
    changed = copy.deepcopy(manifest)
    *parents, last = path.split(".")
    target: Any = changed
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    target[last] = value
    return changed


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    [
        ("Deployment", "spec.template.spec.containers.0.ports.0.containerPort", "8080"),
        ("Deployment", "spec.template.spec.containers.0.readinesProbe", {}),
        ("HorizontalPodAutoscaler", "spec.minReplicas", "three"),
        ("Job", "spec.backoffLimit", "six"),
        ("Job", "spec.template.spec.containers.0.comand", ["python"]),
        ("PodDisruptionBudget", "spec.maxUnavailable", {"pods": 1}),
        ("Service", "spec.ports.0.port", "80"),
    ],
)
def test_a_broken_built_in_object_is_refused(kind: str, path: str, value: Any) -> None:
    assert kubernetes_errors(one(kind), MIN_KUBERNETES) is None
    error = kubernetes_errors(broken(one(kind), path, value), MIN_KUBERNETES)
    assert error is not None and path.split(".")[-1] in error


@pytest.mark.parametrize(
    ("kind", "path", "value", "says"),
    [
        ("Cluster", "spec.instances", "3", "/spec/instances must be integer"),
        ("Cluster", "spec.storage.size", 20, "/spec/storage/size must be string"),
        ("Cluster", "spec.backup.retentionPolicy", "30 days", "/spec/backup/retentionPolicy must"),
        (
            "Cluster",
            "spec.backup.barmanObjectStore.wal.compression",
            "zip",
            "/spec/backup/barmanObjectStore/wal/compression must be equal to one of",
        ),
        ("ScheduledBackup", "spec.schedule", 3, "/spec/schedule must be string"),
        ("ScheduledBackup", "spec.method", "pg_dump", "/spec/method must be equal to one of"),
        ("Pooler", "spec.pgbouncer.poolMode", "statement", "/spec/pgbouncer/poolMode must be"),
        ("Pooler", "spec.type", "rw-primary", "/spec/type must be equal to one of"),
        ("ServiceMonitor", "spec.endpoints.0.port", 8080, "/spec/endpoints/0/port must be string"),
    ],
)
def test_a_broken_custom_resource_is_refused(
    crd_errors: CrdCheck, kind: str, path: str, value: Any, says: str
) -> None:
    (error,) = crd_errors([broken(one(kind), path, value)])
    assert error is not None and says in error


def test_an_unknown_custom_resource_is_not_waved_through(crd_errors: CrdCheck) -> None:
    backup = {"apiVersion": "postgresql.cnpg.io/v1", "kind": "Backup", "metadata": {"name": "b"}}
    assert crd_errors([backup]) == ["no CRD schema here for postgresql.cnpg.io/v1 Backup"]


def container_ports() -> dict[str, int]:
    return {port["name"]: port["containerPort"] for port in container()["ports"]}


def test_the_probes_ask_what_the_wire_contract_says() -> None:
    app = container()
    config = one("ConfigMap")["data"]
    assert container_ports() == {
        "http": int(config["PORT"]),
        "metrics": int(config["METRICS_PORT"]),
    }
    probes = {name: app[name]["httpGet"] for name in ("startupProbe", "livenessProbe")}
    probes["readinessProbe"] = app["readinessProbe"]["httpGet"]
    assert {name: probe["path"] for name, probe in probes.items()} == {
        "startupProbe": "/healthz",
        "livenessProbe": "/healthz",
        "readinessProbe": "/readyz",
    }
    assert {probe["port"] for probe in probes.values()} == {"http"}
    # A liveness probe that gave up before the readiness one would restart a pod that only
    # lost its database; /healthz does not depend on it, and must be given longer.
    liveness, readiness = app["livenessProbe"], app["readinessProbe"]
    assert (
        liveness["periodSeconds"] * liveness["failureThreshold"]
        > readiness["periodSeconds"] * readiness["failureThreshold"]
    )


async def test_the_probed_and_scraped_paths_answer_without_credentials_on_their_ports(
    make_settings: Any,
) -> None:
    """The probes on `http`, the scrape on `metrics` alone: the port the ingress reaches
    answers /metrics 404."""
    app = container()
    probed = {app[probe]["httpGet"]["path"] for probe in ("startupProbe", "livenessProbe")}
    probed.add(app["readinessProbe"]["httpGet"]["path"])
    (scrape,) = one("ServiceMonitor")["spec"]["endpoints"]
    service_ports = {port["name"]: port["targetPort"] for port in one("Service")["spec"]["ports"]}
    assert service_ports == {"http": "http", "metrics": "metrics"}
    assert (probed, scrape["port"], scrape["path"]) == (
        {"/healthz", "/readyz"},
        "metrics",
        "/metrics",
    )
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        metrics_port = free.getsockname()[1]
    async with service_and_app(make_settings(metrics_port=metrics_port)) as (api, _):
        for path in sorted(probed):
            assert (await api.get(path)).status == 200, path
        assert (await api.get(scrape["path"])).status == 404
        scraper = Api(api.session, f"http://127.0.0.1:{metrics_port}")
        assert (await scraper.get(scrape["path"])).status == 200


def test_shutdown_finishes_inside_the_grace_period() -> None:
    pod = one("Deployment")["spec"]["template"]["spec"]
    command = container()["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep"
    drain = float(one("ConfigMap")["data"]["SHUTDOWN_TIMEOUT_SECONDS"])
    assert pod["terminationGracePeriodSeconds"] > float(command[1]) + drain


def test_one_worker_per_requested_core_within_limits() -> None:
    resources = container()["resources"]
    assert set(resources["requests"]) == set(resources["limits"]) == {"cpu", "memory"}
    workers = int(one("ConfigMap")["data"]["WORKERS"])
    assert workers == cores(resources["requests"]["cpu"])
    assert cores(resources["limits"]["cpu"]) >= workers


def readme_settings() -> set[str]:
    text = (REPO / "docs" / "operations.md").read_text()
    section = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])}


def test_every_setting_is_documented_and_read_as_meant() -> None:
    secret = one("Secret", APP_SECRET)
    template = secret["stringData"]
    cluster = one("Cluster")["metadata"]["name"]
    database = {
        (f"{cluster}-app", "username"): "cryptid",
        (f"{cluster}-app", "password"): "Secret0",
        (f"{cluster}-app", "uri"): f"postgresql://cryptid:Secret0@{cluster}-rw:5432/cryptid",
    }
    # A Secret applied as the template ships it does not start.
    placeholders = {(secret["metadata"]["name"], key): value for key, value in template.items()}
    with pytest.raises(ConfigError, match="placeholder"):
        load_settings(environment(placeholders | database))
    # As the instructions make it: random values.
    real = {key: secrets.token_urlsafe(48) for key in template}
    env = environment({(secret["metadata"]["name"], k): v for k, v in real.items()} | database)
    helpers = {"DB_USER", "DB_PASSWORD"}
    assert set(env) - helpers <= readme_settings()
    # The proxies to trust are the operator's to name: as shipped, the pods do not start.
    assert env["TRUSTED_PROXIES"].startswith("REPLACE-ME")
    with pytest.raises(ConfigError, match="TRUSTED_PROXIES"):
        load_settings(env)
    env["TRUSTED_PROXIES"] = INGRESS_PODS
    settings = load_settings(env)
    assert settings.workers == int(env["WORKERS"]) and settings.host == "0.0.0.0"
    assert settings.secret_key == real["SECRET_KEY"]
    assert settings.ops_token == real["OPS_TOKEN"]
    assert settings.database_url == "postgresql://cryptid:Secret0@cryptid-db-pooler-rw:5432/cryptid"
    assert [str(network) for network in settings.trusted_proxies] == INGRESS_PODS.split(",")
    assert settings.metrics_port == container_ports()["metrics"] != settings.port


def test_the_database_urls_go_through_the_pooler_and_listen_beside_it() -> None:
    cluster, pooler = one("Cluster"), one("Pooler")
    name = cluster["metadata"]["name"]
    assert cluster["spec"]["instances"] == 3
    # The Pooler's Service carries its name; it fronts the primary in transaction mode.
    assert pooler["spec"]["cluster"]["name"] == name
    assert pooler["spec"]["type"] == "rw"
    assert pooler["spec"]["pgbouncer"]["poolMode"] == "transaction"
    (database_url,) = [var["value"] for var in container()["env"] if var["name"] == "DATABASE_URL"]
    url = urlsplit(database_url)
    assert (url.hostname, url.port) == (pooler["metadata"]["name"], 5432)
    assert url.path == "/" + cluster["spec"]["bootstrap"]["initdb"]["database"]
    # LISTEN needs a session: the URI of the primary (`-rw`) from the operator's app Secret.
    refs = secret_refs()
    assert refs["LISTEN_DATABASE_URL"] == (f"{name}-app", "uri")
    assert refs["DB_USER"] == (f"{name}-app", "username")
    assert refs["DB_PASSWORD"] == (f"{name}-app", "password")
    # Transaction pooling loses prepared statements
    # (docs/operations.md#configuration: DB_STATEMENT_CACHE_SIZE).
    assert one("ConfigMap")["data"]["DB_STATEMENT_CACHE_SIZE"] == "0"


def test_the_secret_template_is_placeholders_for_what_the_pods_require() -> None:
    secret = one("Secret", APP_SECRET)
    assert SECRET_TEMPLATE not in kustomization()["resources"]
    assert all(
        value.startswith("REPLACE-ME")
        for template in load(SECRET_TEMPLATE)
        for value in template["stringData"].values()
    )
    required = {key for name, key in secret_refs().values() if name == secret["metadata"]["name"]}
    assert required == set(secret["stringData"]) == {"SECRET_KEY", "OPS_TOKEN"}
    # A missing key must stop the pod, not let it generate a secret of its own.
    assert not any(
        var["valueFrom"]["secretKeyRef"].get("optional")
        for var in container()["env"]
        if "valueFrom" in var
    )


def test_every_selector_finds_the_pods_and_every_reference_its_object() -> None:
    deployment, service = one("Deployment"), one("Service")
    pods = deployment["spec"]["template"]["metadata"]["labels"]
    name = deployment["metadata"]["name"]

    def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
        return selector.items() <= labels.items()

    assert selects(deployment["spec"]["selector"]["matchLabels"], pods)
    assert selects(service["spec"]["selector"], pods)
    assert selects(one("PodDisruptionBudget")["spec"]["selector"]["matchLabels"], pods)
    (spread,) = deployment["spec"]["template"]["spec"]["topologySpreadConstraints"]
    assert selects(spread["labelSelector"]["matchLabels"], pods)
    target = one("HorizontalPodAutoscaler")["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", name)
    assert "replicas" not in deployment["spec"]  # the autoscaler owns it
    monitor = one("ServiceMonitor")["spec"]
    assert selects(monitor["selector"]["matchLabels"], service["metadata"]["labels"])
    ports = {port["name"] for port in service["spec"]["ports"]}
    assert {endpoint["port"] for endpoint in monitor["endpoints"]} <= ports
    assert {port["targetPort"] for port in service["spec"]["ports"]} <= {
        port["name"] for port in container()["ports"]
    }


def test_the_pods_run_unprivileged_on_a_read_only_root() -> None:
    pod = one("Deployment")["spec"]["template"]["spec"]
    context = container()["securityContext"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"]["drop"] == ["ALL"]
    # The image's own user, so that files it owns stay readable.
    dockerfile = DockerfileParser(path=str(REPO / "deploy/Dockerfile")).structure
    (user,) = [line["value"] for line in dockerfile if line["instruction"] == "USER"]
    assert user == f"{pod['securityContext']['runAsUser']}:{pod['securityContext']['runAsGroup']}"
    # What the service writes: the workers' metrics in /tmp (WORKERS > 1). DATA_DIR is not
    # writable on purpose (see config.yaml).
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    mounts = {mount["mountPath"]: mount["name"] for mount in container()["volumeMounts"]}
    assert "emptyDir" in volumes[mounts["/tmp"]]
    assert one("ConfigMap")["data"]["DATA_DIR"] not in mounts


def backup_secret_keys() -> dict[str, set[str]]:
    """Per Secret of the template but the service's own, the keys it holds."""
    return {
        doc["metadata"]["name"]: set(doc["stringData"])
        for doc in load(SECRET_TEMPLATE)
        if doc["metadata"]["name"] != APP_SECRET
    }


def credential_refs(store: Manifest) -> set[tuple[str, str]]:
    return {(ref["name"], ref["key"]) for ref in store["s3Credentials"].values()}


def test_the_database_archives_its_wal_and_is_backed_up_every_day() -> None:
    cluster, scheduled = one("Cluster"), one("ScheduledBackup")
    backup = cluster["spec"]["backup"]
    store = backup["barmanObjectStore"]
    assert re.fullmatch(r"[1-9][0-9]*[dwm]", backup["retentionPolicy"])
    assert store["wal"]["compression"] == store["data"]["compression"] == "gzip"
    # Where to is the operator's to fill in: placeholders, not somebody's bucket.
    assert "REPLACE-ME" in store["destinationPath"] and "REPLACE-ME" in store["endpointURL"]
    # The keys come from the template's other Secret, every key it has and no other.
    ((name, keys),) = backup_secret_keys().items()
    assert credential_refs(store) == {(name, key) for key in keys}
    # Daily: the operator's cron leads with seconds; day, month and weekday are any.
    fields = scheduled["spec"]["schedule"].split()
    assert len(fields) == 6 and fields[3:] == ["*", "*", "*"]
    assert all(field.isdigit() for field in fields[:3])
    assert scheduled["spec"]["cluster"]["name"] == cluster["metadata"]["name"]
    assert scheduled["spec"]["method"] == "barmanObjectStore"
    assert scheduled["spec"]["immediate"] is True


def test_the_restore_example_is_a_new_cluster_that_reads_the_live_archive(
    crd_errors: CrdCheck,
) -> None:
    (restore,) = [doc for doc in yaml.safe_load_all(RESTORE_EXAMPLE.read_text()) if doc]
    live = one("Cluster")
    assert crd_errors([restore]) == [None]
    # A new Cluster beside the live one, never applied with the rest.
    assert restore["kind"] == "Cluster"
    assert restore["metadata"]["name"] != live["metadata"]["name"]
    assert RESTORE_EXAMPLE.parent == K8S / "examples"
    assert not any("examples" in resource for resource in kustomization()["resources"])
    # Same PostgreSQL, same database and owner, so the service's URLs only change host.
    assert restore["spec"]["imageName"] == live["spec"]["imageName"]
    recovery = restore["spec"]["bootstrap"]["recovery"]
    initdb = live["spec"]["bootstrap"]["initdb"]
    assert (recovery["database"], recovery["owner"]) == (initdb["database"], initdb["owner"])
    # It reads the very store the live Cluster writes to, with the same keys.
    (source,) = restore["spec"]["externalClusters"]
    assert recovery["source"] == source["name"]
    written, read = live["spec"]["backup"]["barmanObjectStore"], source["barmanObjectStore"]
    assert (read["destinationPath"], read["endpointURL"]) == (
        written["destinationPath"],
        written["endpointURL"],
    )
    assert credential_refs(read) == credential_refs(written)
    assert read["wal"]["compression"] == written["wal"]["compression"]
    # Without a `backup` section of its own it cannot write into the live Cluster's archive.
    assert "backup" not in restore["spec"]
    target = datetime.fromisoformat(recovery["recoveryTarget"]["targetTime"])
    assert target.utcoffset() is not None


def test_the_readme_shows_the_restore_example_as_it_is() -> None:
    readme = (REPO / "deploy" / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL)
    assert RESTORE_EXAMPLE.read_text() in blocks
    assert str(RESTORE_EXAMPLE.relative_to(REPO)) in readme


def release() -> str:
    version: str = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    return version


def labelled(key: str, value: str) -> list[Manifest]:
    """What `kubectl apply -k deploy/k8s -l key=value` applies."""
    return [doc for doc in applied() if doc["metadata"].get("labels", {}).get(key) == value]


def test_the_migration_job_runs_the_releases_migrations_with_the_pods_settings() -> None:
    job = one("Job")
    pod = job["spec"]["template"]["spec"]
    migrate = container("Job")
    assert migrate["command"] == ["python", "-m", "service", "migrate"]
    assert "args" not in migrate
    # Each attempt a pod of its own, kept for its log; a few attempts, not an endless loop.
    assert pod["restartPolicy"] == "Never"
    assert 1 <= job["spec"]["backoffLimit"] <= 10
    # The release's image, at the tag of the release this file belongs to.
    (image,) = kustomization()["images"]
    assert image["newTag"] == release()
    # The pods' settings and the service's own Secret, read the same way: a missing key stops
    # the Job as it stops the pods.
    assert migrate["envFrom"] == container()["envFrom"]
    own = {name: ref for name, ref in secret_refs().items() if ref[0] == APP_SECRET}
    assert {name: ref for name, ref in secret_refs("Job").items() if ref[0] == APP_SECRET} == own
    assert not any(
        var["valueFrom"]["secretKeyRef"].get("optional")
        for var in migrate["env"]
        if "valueFrom" in var
    )
    # As unprivileged as the instances, on the same read-only root.
    deployment_pod = one("Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"] == deployment_pod["securityContext"]
    assert migrate["securityContext"] == container()["securityContext"]
    assert pod["automountServiceAccountToken"] is False


def test_the_migration_job_reaches_postgresql_directly_not_through_the_pooler() -> None:
    cluster, pooler = one("Cluster")["metadata"]["name"], one("Pooler")["metadata"]["name"]
    refs = secret_refs("Job")
    # The primary's URI from the operator's app Secret: the `-rw` Service, as LISTEN's.
    assert refs["DATABASE_URL"] == (f"{cluster}-app", "uri") == secret_refs()["LISTEN_DATABASE_URL"]
    assert not any(pooler in var.get("value", "") for var in container("Job")["env"])
    uri = f"postgresql://cryptid:Secret0@{cluster}-rw:5432/cryptid"
    real = {(APP_SECRET, key): secrets.token_urlsafe(48) for key in ("SECRET_KEY", "OPS_TOKEN")}
    env = environment(real | {(f"{cluster}-app", "uri"): uri}, kind="Job")
    env["TRUSTED_PROXIES"] = INGRESS_PODS
    settings = load_settings(env)
    assert urlsplit(settings.database_url or "").hostname == f"{cluster}-rw"
    assert settings.listen_database_url in (None, settings.database_url)


def test_the_pods_wait_for_the_migrations_instead_of_applying_them() -> None:
    cluster = one("Cluster")["metadata"]["name"]
    database = {
        (f"{cluster}-app", "username"): "cryptid",
        (f"{cluster}-app", "password"): "Secret0",
        (f"{cluster}-app", "uri"): f"postgresql://cryptid:Secret0@{cluster}-rw:5432/cryptid",
    }
    real = {(APP_SECRET, key): secrets.token_urlsafe(48) for key in ("SECRET_KEY", "OPS_TOKEN")}
    env = environment(real | database)
    env["TRUSTED_PROXIES"] = INGRESS_PODS
    settings = load_settings(env)
    assert settings.migrate_on_start is False
    # A pod that starts before the Job is done gives up, and says why, before the startup
    # probe would kill it without a word; the kubelet starts it again.
    startup = container()["startupProbe"]
    assert settings.migration_wait_seconds < startup["periodSeconds"] * startup["failureThreshold"]


def test_the_migration_jobs_pod_is_never_taken_for_an_instance() -> None:
    job_pod = one("Job")["spec"]["template"]["metadata"]["labels"]
    deployment = one("Deployment")
    selectors = [
        deployment["spec"]["selector"]["matchLabels"],
        one("Service")["spec"]["selector"],
        one("PodDisruptionBudget")["spec"]["selector"]["matchLabels"],
        deployment["spec"]["template"]["spec"]["topologySpreadConstraints"][0]["labelSelector"][
            "matchLabels"
        ],
    ]
    # The Service would send players to it (it has no readiness probe), the budget and the
    # spread would count it.
    for selector in selectors:
        assert not selector.items() <= job_pod.items(), selector


def test_the_migration_job_is_named_after_the_release_and_applied_alone_first() -> None:
    job = one("Job")
    # A Job's pod template cannot change once it exists: each release's Job is a new object.
    assert job["metadata"]["name"] == f"cryptid-backend-migrate-{release().replace('.', '-')}"
    assert len(job["metadata"]["name"]) <= 63
    # The label the walk-through applies first selects the Job and nothing else.
    assert labelled(*MIGRATE_SELECTOR) == [job]


def upgrade_commands() -> list[list[str]]:
    """The commands of deploy/README.md's Kubernetes upgrade, in order, as argument lists."""
    section = README.read_text().split("\n## Upgrading\n", 1)[1].split("\n## ", 1)[0]
    kubernetes = section.split("\n### On Kubernetes\n", 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", kubernetes, re.DOTALL)
    commands = []
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(words)
    return commands


def test_the_upgrade_waits_for_the_migrations_before_the_pods_roll() -> None:
    commands = upgrade_commands()
    job = one("Job")["metadata"]["name"]
    selector = "=".join(MIGRATE_SELECTOR)

    def position(matches: Callable[[list[str]], bool]) -> int:
        (found,) = [index for index, words in enumerate(commands) if matches(words)]
        return found

    def applies_the_kustomization(words: list[str]) -> bool:
        return words[:4] == ["kubectl", "apply", "-k", "deploy/k8s"]

    migrations = position(
        lambda words: applies_the_kustomization(words) and words[4:] == ["-l", selector]
    )
    waited = position(
        lambda words: (
            words[:2] == ["kubectl", "wait"]
            and "--for=condition=complete" in words
            and f"job/{job}" in words
        )
    )
    everything = position(lambda words: applies_the_kustomization(words) and len(words) == 4)
    rolled = position(
        lambda words: (
            words[:3] == ["kubectl", "rollout", "status"]
            and f"deployment/{one('Deployment')['metadata']['name']}" in words
        )
    )
    assert migrations < waited < everything < rolled


def test_a_rollout_and_a_drain_keep_play_going() -> None:
    deployment = one("Deployment")["spec"]
    strategy = deployment["strategy"]
    # A new pod is ready (readiness: /readyz) before an old one stops.
    assert strategy["type"] == "RollingUpdate"
    assert strategy["rollingUpdate"]["maxUnavailable"] == 0
    assert strategy["rollingUpdate"]["maxSurge"] == 1
    assert container()["readinessProbe"]["httpGet"]["path"] == "/readyz"
    # A drain takes one instance at a time, and leaves at least two serving.
    budget = one("PodDisruptionBudget")["spec"]
    assert "minAvailable" not in budget
    assert budget["maxUnavailable"] == 1
    assert one("HorizontalPodAutoscaler")["spec"]["minReplicas"] - budget["maxUnavailable"] >= 2
