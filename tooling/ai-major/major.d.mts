// Types of major.mjs for the TypeScript that imports it (tests, vitest configs, in packages that do
// not read JavaScript). major.test.ts holds them equal to what TypeScript derives from major.mjs.

/** An AI SDK major the packages support. */
export type AiMajor = '6' | '7';

/** The AI SDK majors the packages support, with the oldest Node each one runs on. */
export declare const majors: {
  readonly 6: { readonly node: 20 };
  readonly 7: { readonly node: 22 };
};

/** tooling/package.json: the aliases resolve from this file's folder. */
export declare const aliasAnchor: string;

/** The major to run: CTXGRAPH_AI_MAJOR when set, else 7 on Node 22+ and 6 before. */
export declare function aiMajor(environment?: NodeJS.ProcessEnv, nodeVersion?: string): AiMajor;

/** The alias a bare specifier stands for in `major` (subpath kept), or undefined. */
export declare function majorSpecifier(specifier: string, major: AiMajor): string | undefined;
