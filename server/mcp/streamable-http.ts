/**
 * The SDK's HTTP transport, behind a module of our own so that `McpHttpSessions` can load it
 * with the first session: through this CommonJS module it is the same SDK build the tools use.
 */
export { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
