/**
 * The layering `npm test` checks (test/unit/layering.test.ts): no import cycle anywhere, the
 * domain pure, the desktop shell on the server's public entry only, the dashboard on nothing of
 * the server and on the desktop bridge's types only.
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
      comment: "server/domain declares the ports it needs (each area's ports.ts); db, storage, http and the rest implement or call it.",
      severity: 'error',
      from: { path: '^server/domain/' },
      to: { pathNot: ['^server/domain/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'only-app-composes',
      comment: 'server/app is where the edition and the database are chosen and the parts composed; the CLI, MCP and HTTP take the use cases it hands them, never a store or a connection of their own.',
      severity: 'error',
      from: { path: '^server/(cli|mcp|http)/' },
      to: { path: '^server/db/' },
    },
    {
      name: 'cli-and-mcp-store-nothing-themselves',
      comment: 'Attachment bytes are stored behind the use cases too; only HTTP streams an upload to its holding place.',
      severity: 'error',
      from: { path: '^server/(cli|mcp)/' },
      to: { path: '^server/storage/' },
    },
    {
      name: 'main-uses-the-public-entry',
      comment: 'The desktop shell reaches the server through server/index.ts only.',
      severity: 'error',
      from: { path: '^main/' },
      to: { path: '^server/', pathNot: '^server/index\\.ts$' },
    },
    {
      name: 'renderer-imports-no-server',
      comment:
        'The dashboard talks to the server over HTTP only: its records are the types generated from the OpenAPI document (@greenlight/client), never the server\'s own, not even as types.',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: '^server/' },
    },
    {
      name: 'renderer-imports-bridge-types-only',
      comment: 'The desktop shell reaches the dashboard through the preload bridge; the dashboard takes its contract (main/bridge.ts) as types, never code.',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: '^main/', dependencyTypesNot: ['type-only'] },
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
