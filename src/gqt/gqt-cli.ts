export async function runGqtCli(_args: string[]): Promise<number> {
  process.stderr.write('gqt: not available in this build\n');
  return 2;
}
