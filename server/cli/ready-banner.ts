/** Where to find a started Greenlight, for the person at the terminal. */
export interface ReadyAddresses {
  dashboard?: string;
  api?: string;
  dataDir: string;
}

export function readyBanner({ dashboard, api, dataDir }: ReadyAddresses): string {
  const rows: Array<[string, string]> = [];
  if (dashboard) rows.push(['Reviewer dashboard', `${dashboard}   ← open this to review`]);
  if (api) rows.push(['API for agents', `${api}   (reference: ${api}/docs)`]);
  if (api) rows.push(['Data', dataDir]);
  const width = Math.max(...rows.map(([label]) => label.length));
  return ['', 'Greenlight is running.', ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`), 'Stop it with Ctrl+C.', ''].join('\n');
}

/**
 * The banner goes to a terminal only: to standard output when a person reads it, else to
 * standard error when that is the terminal (say, `greenlight start | tee log`), where it
 * stays out of the JSON lines a log collector reads from standard output.
 */
export function showToPerson(text: string, streams: Array<NodeJS.WriteStream> = [process.stdout, process.stderr]): void {
  streams.find((stream) => stream.isTTY)?.write(`${text}\n`);
}
