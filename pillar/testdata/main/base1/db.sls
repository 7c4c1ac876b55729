db: {engine: postgres}
