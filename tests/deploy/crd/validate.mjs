// Validates custom resources against their CRDs' schemas, as compiled by kubernetes-models:
// @kubernetes-models/cloudnative-pg 0.1.4 is generated from CloudNativePG 1.24.1's CRDs and
// @kubernetes-models/prometheus-operator 5.0.1 from prometheus-operator 0.90.1's.
// stdin: a JSON array of objects; stdout: a JSON array, per object null or its errors.
import { readFileSync } from "node:fs";
import { Cluster } from "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1/Cluster";
import { Pooler } from "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1/Pooler";
import { ScheduledBackup } from "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1/ScheduledBackup";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";

const MODELS = new Map(
  [Cluster, Pooler, ScheduledBackup, ServiceMonitor].map((model) => [`${model.apiVersion}/${model.kind}`, model]),
);

function check(object) {
  const model = MODELS.get(`${object.apiVersion}/${object.kind}`);
  if (model === undefined) {
    return `no CRD schema here for ${object.apiVersion} ${object.kind}`;
  }
  try {
    new model(object).validate();
    return null;
  } catch (error) {
    return error.message;
  }
}

const objects = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(objects.map(check)));
