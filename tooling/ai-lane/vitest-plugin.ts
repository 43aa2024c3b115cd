import type { Plugin } from 'vitest/config';
import { aiLane, aliasAnchor, laneSpecifier } from './lane.mjs';

/**
 * The vite plugin that puts a vitest run on the AI SDK lane (lane.mjs): in lane 6 it resolves
 * every `ai`, `@ai-sdk/openai` and `@ai-sdk/react` import (of the tests, the package's source and the sibling
 * packages' `dist`) to the AI SDK 6 alias under tooling/, through vite's own resolver (package
 * exports and conditions apply). In lane 7 it does nothing.
 */
export function aiLanePlugin(lane: '6' | '7' = aiLane()): Plugin {
  return {
    name: 'ctxgraph:ai-lane',
    enforce: 'pre',
    async resolveId(source, _importer, options) {
      const alias = laneSpecifier(source, lane);
      if (alias === undefined) return null;
      const resolved = await this.resolve(alias, aliasAnchor, { ...options, skipSelf: true });
      if (resolved === null) {
        throw new Error(
          `AI SDK lane ${lane}: ${source} → ${alias} does not resolve from tooling/; run \`npx -y pnpm@10.34.9 install\`.`,
        );
      }
      return resolved;
    },
  };
}
