import { expect, it } from 'vitest';
import readme from '../README.md?raw';
import example from './__fixtures__/chat-worker.ts?raw';

it("the README's example is the Worker the tests run", () => {
  expect(readme).toContain(`\`\`\`ts\n${example.trimEnd()}\n\`\`\``);
});
