// Preloaded (`node --require`) into a tool that must work offline: the first outgoing
// connection it tries — telemetry, an update check, a remote $ref — ends it with exit code 97
// and says where it was going. Patching Socket#connect catches plain TCP, HTTP and TLS alike,
// and before any DNS lookup.
const fs = require('node:fs');
const net = require('node:net');

net.Socket.prototype.connect = function refuseConnection(...args) {
  const [target] = args;
  const where = typeof target === 'object' && target !== null ? `${target.host ?? target.path}:${target.port ?? ''}` : String(target);
  fs.writeSync(2, `no-network: refused a connection to ${where}\n`);
  process.exit(97);
};
