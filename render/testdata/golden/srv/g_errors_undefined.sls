a: {{ not_defined_anywhere }}
