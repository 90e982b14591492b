package check

import rego.v1

# CIS 5.3.2: every application namespace holds at least one NetworkPolicy.

default result := false

violations contains namespace if {
	some namespace, policies in input.namespaces
	count(policies) == 0
}

result if {
	count(input.namespaces) > 0
	count(violations) == 0
}
