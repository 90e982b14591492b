#!/usr/bin/env bash
# Evidence for CIS 5.7.4: what runs in the default namespace.
set -euo pipefail
kubectl get pods,deployments,services --namespace default --output json \
  | jq '{objects: [.items[] | {kind: .kind, name: .metadata.name}]}' > collected_data.json
