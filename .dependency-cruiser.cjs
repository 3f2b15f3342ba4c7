/**
 * The layering `npm test` checks (test/unit/layering.test.ts): no import cycle anywhere, the
 * domain pure, the desktop shell on the server's public entry only, the dashboard on types.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle ties modules into one that cannot be understood, tested or loaded piecemeal.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-imports-only-itself',
      comment: 'server/domain declares the ports it needs (ports.ts); db, storage, http and the rest implement or call it.',
      severity: 'error',
      from: { path: '^server/domain/' },
      to: { pathNot: ['^server/domain/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'main-uses-the-public-entry',
      comment: 'The desktop shell reaches the server through server/index.ts only.',
      severity: 'error',
      from: { path: '^main/' },
      to: { path: '^server/', pathNot: '^server/index\\.ts$' },
    },
    {
      name: 'renderer-imports-types-only',
      comment: 'The dashboard talks to the server over HTTP; it takes record types from the server, never code.',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: '^(server|main)/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mts', '.js', '.vue', '.json'] },
  },
};
