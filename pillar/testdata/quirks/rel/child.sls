include:
  - .sibling
child: 1
