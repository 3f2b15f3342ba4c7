/** The two functions of jStat (no published types) that the statistics tests check against. */
declare module 'jstat' {
  const jStat: {
    ibeta(x: number, a: number, b: number): number;
    ibetainv(p: number, a: number, b: number): number;
  };
  export default jStat;
}
