rel_sibling: 1
