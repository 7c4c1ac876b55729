top_sibling: 1
