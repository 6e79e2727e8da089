/** builds the web console (console/src) into `dir`, emptied first; answers the names of the files written */
export function buildConsole(dir: string, options?: { minify?: boolean }): Promise<string[]>;
