// Types of lane.mjs for the TypeScript that imports it (tests, vitest configs, in packages that do
// not read JavaScript). lane.test.ts holds them equal to what TypeScript derives from lane.mjs.

/** An AI SDK major the packages support. */
export type AiLane = '6' | '7';

/** The AI SDK majors the packages support, with the oldest Node each one runs on. */
export declare const lanes: {
  readonly 6: { readonly node: 20 };
  readonly 7: { readonly node: 22 };
};

/** tooling/package.json: the aliases resolve from this file's folder. */
export declare const aliasAnchor: string;

/** The lane to run: CTXGRAPH_AI_LANE when set, else 7 on Node 22+ and 6 before. */
export declare function aiLane(environment?: NodeJS.ProcessEnv, nodeVersion?: string): AiLane;

/** The alias a bare specifier stands for in `lane` (subpath kept), or undefined. */
export declare function laneSpecifier(specifier: string, lane: AiLane): string | undefined;
