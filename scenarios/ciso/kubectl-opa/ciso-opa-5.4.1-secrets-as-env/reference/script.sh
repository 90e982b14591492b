#!/usr/bin/env bash
# Evidence for CIS 5.4.1: every pod of namespace orders with its spec.
set -euo pipefail
kubectl get pods --namespace orders --output json \
  | jq '{pods: [.items[] | {namespace: .metadata.namespace, name: .metadata.name, spec: .spec}]}' \
  > collected_data.json
