package check

import rego.v1

# CIS 5.2.6: Minimize the admission of containers with allowPrivilegeEscalation: every container (init containers too) must set securityContext.allowPrivilegeEscalation to false explicitly; leaving it unset allows escalation.

default result := false

containers(spec) := array.concat(
	array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", [])),
	object.get(spec, "ephemeralContainers", []),
)

escalation_blocked(c) if c.securityContext.allowPrivilegeEscalation == false

violations contains pod.name if {
	some pod in input.pods
	some c in containers(pod.spec)
	not escalation_blocked(c)
}

result if {
	is_array(input.pods)
	count(violations) == 0
}
