package check

import rego.v1

# CIS 5.2.7: Minimize the admission of root containers: every container must be forbidden to run as root, either by runAsNonRoot: true or by a runAsUser other than 0, set on the container or inherited from the Pod's securityContext (a container setting overrides the Pod's).

default result := false

containers(spec) := array.concat(
	array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", [])),
	object.get(spec, "ephemeralContainers", []),
)

# The effective setting: the container's, else the Pod's.
effective(pod, c, field) := c.securityContext[field]

effective(pod, c, field) := pod.spec.securityContext[field] if not has_field(c, field)

has_field(c, field) if _ = c.securityContext[field]

non_root(pod, c) if effective(pod, c, "runAsUser") > 0

non_root(pod, c) if {
	effective(pod, c, "runAsNonRoot") == true
	not effective(pod, c, "runAsUser") == 0
}

violations contains pod.name if {
	some pod in input.pods
	some c in containers(pod.spec)
	not non_root(pod, c)
}

result if {
	is_array(input.pods)
	count(violations) == 0
}
