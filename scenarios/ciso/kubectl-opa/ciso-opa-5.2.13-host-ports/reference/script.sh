#!/usr/bin/env bash
# Evidence for CIS 5.2.13: every pod of namespace ingress with its spec.
set -euo pipefail
kubectl get pods --namespace ingress --output json \
  | jq '{pods: [.items[] | {namespace: .metadata.namespace, name: .metadata.name, spec: .spec}]}' \
  > collected_data.json
