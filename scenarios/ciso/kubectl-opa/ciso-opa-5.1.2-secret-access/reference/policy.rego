package check

import rego.v1

# CIS 5.1.2: Minimize access to secrets: no Role may grant get, list or watch on Secrets (a wildcard resource or verb in the core API group counts as granting them).

default result := false

reads := {"get", "list", "watch", "*"}

violations contains role.name if {
	some role in input.roles
	some r in role.rules
	some group in r.apiGroups
	group in {"", "*"}
	some resource in r.resources
	resource in {"secrets", "*"}
	some verb in r.verbs
	verb in reads
}

result if {
	is_array(input.roles)
	count(violations) == 0
}
