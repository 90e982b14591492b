package check

import rego.v1

# CIS 5.2.9: Minimize the admission of containers with added capabilities: no container may list any capability under securityContext.capabilities.add (dropping capabilities is fine).

default result := false

containers(spec) := array.concat(
	array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", [])),
	object.get(spec, "ephemeralContainers", []),
)

violations contains pod.name if {
	some pod in input.pods
	some c in containers(pod.spec)
	count(object.get(object.get(object.get(c, "securityContext", {}), "capabilities", {}), "add", [])) > 0
}

result if {
	is_array(input.pods)
	count(violations) == 0
}
