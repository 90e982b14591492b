#!/usr/bin/env bash
# Evidence for CIS 5.2.3: every pod of namespace metrics with its spec.
set -euo pipefail
kubectl get pods --namespace metrics --output json \
  | jq '{pods: [.items[] | {namespace: .metadata.namespace, name: .metadata.name, spec: .spec}]}' \
  > collected_data.json
