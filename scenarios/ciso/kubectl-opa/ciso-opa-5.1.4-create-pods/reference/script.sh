#!/usr/bin/env bash
# Evidence for CIS 5.1.4: the Roles of namespace batch-jobs and their rules.
set -euo pipefail
kubectl get roles --namespace batch-jobs --output json \
  | jq '{roles: [.items[] | {name: .metadata.name, rules: (.rules // [])}]}' \
  > collected_data.json
