early: first
