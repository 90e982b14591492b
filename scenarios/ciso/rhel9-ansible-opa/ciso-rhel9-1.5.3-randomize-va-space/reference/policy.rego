package check

import rego.v1

# CIS Red Hat Enterprise Linux 9 Benchmark 1.5.3: Ensure address space layout randomization (ASLR) is enabled. input: {host: running value of kernel.randomize_va_space}.

default result := false

ok(v) if {
    is_string(v)
    trim_space(v) == "2"
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
