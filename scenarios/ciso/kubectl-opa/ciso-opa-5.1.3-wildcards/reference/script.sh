#!/usr/bin/env bash
# Evidence for CIS 5.1.3: the Roles of namespace warehouse and their rules.
set -euo pipefail
kubectl get roles --namespace warehouse --output json \
  | jq '{roles: [.items[] | {name: .metadata.name, rules: (.rules // [])}]}' \
  > collected_data.json
