#!/usr/bin/env bash
# Evidence for CIS 5.2.2: every pod of namespace ledger with its spec.
set -euo pipefail
kubectl get pods --namespace ledger --output json \
  | jq '{pods: [.items[] | {namespace: .metadata.namespace, name: .metadata.name, spec: .spec}]}' \
  > collected_data.json
