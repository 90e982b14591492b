package check

import rego.v1

# CIS 5.1.3: Minimize wildcard use in Roles and ClusterRoles: no Role may use `*` in its apiGroups, resources or verbs.

default result := false

violations contains role.name if {
	some role in input.roles
	some r in role.rules
	some field in ["apiGroups", "resources", "verbs"]
	"*" in object.get(r, field, [])
}

result if {
	is_array(input.roles)
	count(violations) == 0
}
