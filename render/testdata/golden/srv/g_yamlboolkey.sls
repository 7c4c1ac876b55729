#!yaml
1: int key
true: bool key
