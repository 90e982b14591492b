package check

import rego.v1

# CIS Red Hat Enterprise Linux 9 Benchmark 6.3.1.2: Ensure auditd service is enabled. input: {host: whether auditd is enabled}.

default result := false

ok(v) if {
    is_string(v)
    trim_space(v) == "enabled"
}

violations contains host if {
    some host, v in input
    not ok(v)
}

result if {
    is_object(input)
    count(input) > 0
    count(violations) == 0
}
