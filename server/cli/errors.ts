/** A failure the CLI reports as one line on stderr with its own exit code, never a stack. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
