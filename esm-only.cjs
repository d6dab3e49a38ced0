// `require('subagent-inprocess')` lands here: the package is ECMAScript modules only, like cordis 4.
throw new Error(
  'subagent-inprocess is an ES module package and cannot be loaded with require(): use `import` ' +
    "(from CommonJS: `await import('subagent-inprocess')`)",
)
