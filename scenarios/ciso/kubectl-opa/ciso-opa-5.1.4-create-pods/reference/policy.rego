package check

import rego.v1

# CIS 5.1.4: Minimize access to create pods: no Role may grant the verb create (or `*`) on pods in the core API group.

default result := false

violations contains role.name if {
	some role in input.roles
	some r in role.rules
	some group in r.apiGroups
	group in {"", "*"}
	some resource in r.resources
	resource in {"pods", "*"}
	some verb in r.verbs
	verb in {"create", "*"}
}

result if {
	is_array(input.roles)
	count(violations) == 0
}
