/** What to tell the person when the API's port is taken, instead of crashing. */
export function portConflictMessage(port: number, configFile: string): { title: string; message: string } {
  return {
    title: `Port ${port} is already in use`,
    message:
      `Greenlight could not start its API because another program is using port ${port}.\n\n` +
      `Close that program, or choose another port: set api_port in ${configFile} ` +
      `(or the environment variable GREENLIGHT_API_PORT) and start Greenlight again.`,
  };
}
