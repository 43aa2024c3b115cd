import type { Plugin } from 'vitest/config';
import { aiMajor, aliasAnchor, majorSpecifier } from './major.mjs';

/**
 * The vite plugin that puts a vitest run on the AI SDK major (major.mjs): in AI SDK 6 it resolves
 * every `ai`, `@ai-sdk/openai` and `@ai-sdk/react` import (of the tests, the package's source and the sibling
 * packages' `dist`) to the AI SDK 6 alias under tooling/, through vite's own resolver (package
 * exports and conditions apply). In AI SDK 7 it does nothing.
 */
export function aiMajorPlugin(major: '6' | '7' = aiMajor()): Plugin {
  return {
    name: 'ctxgraph:ai-major',
    enforce: 'pre',
    async resolveId(source, _importer, options) {
      const alias = majorSpecifier(source, major);
      if (alias === undefined) return null;
      const resolved = await this.resolve(alias, aliasAnchor, { ...options, skipSelf: true });
      if (resolved === null) {
        throw new Error(
          `AI SDK major ${major}: ${source} → ${alias} does not resolve from tooling/; run \`npx -y pnpm@10.34.9 install\`.`,
        );
      }
      return resolved;
    },
  };
}
