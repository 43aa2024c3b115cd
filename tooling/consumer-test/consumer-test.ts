// `pnpm test:consumer`: the packages as a user gets them. The release rehearsal versions and packs
// every package in a temporary copy (real versions, no `workspace:` ranges) into a folder
// `ctxgraph-tarballs`, as the root README's "Try it before the first release" says
// (`release:rehearse --out`); then, for each AI SDK major, a new project beside that folder, in the
// OS temp directory (outside the workspace: no workspace links, no hoisting), installs with plain
// npm, with `ai@6` on Node 20 and `ai@7` on Node 22 (a Node the machine lacks comes from the npm
// registry, see tooling/node-runtime.mjs). Its first install is that README section's install
// line, word for word (and the line must be the one `release:rehearse --out` prints), and every
// @ctxgraph package must come from a tarball of the line (the registry has none yet: a package
// the line leaves out fails the install, or, once published, shows in the lockfile). There it
// measures the install footprint, runs the READMEs' examples (`consumerReadmes`), adds
// `@ai-sdk/react` with the `overrides` the root README's Install section gives, type-checks a
// small app under `strict` with `nodenext` and with `bundler` resolution, runs it, and checks
// that exactly one copy of `ai` is installed. Last, on the AI SDK major apps/chat declares,
// the chat app copied out of the repository installs, builds, starts and answers one turn
// (copied-chat-app.ts).
//
// better-sqlite3 is a native addon whose prebuilt binaries come from GitHub, which some machines
// cannot reach: each project gets the workspace's build for its Node through prebuild-install's
// own local-prebuilds setting (a `.prebuild-installrc`), so `npm install` runs the package's
// install script as usual without compiling, and better-sqlite3 is pinned (npm `overrides`) to
// the workspace's version, the one those builds are for.
//
// Options: `--major 6` or `--major 7` (default: both), `--node <major>` (another Node for the major,
// 24 say; at least the major's own), `--keep` (leave the projects on disk).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { majors } from '../ai-major/major.mjs';
import { betterSqlitePrebuilds, nodeRuntime } from '../node-runtime.mjs';
import {
  expectedOutput,
  installedPackages,
  packageOf,
  readmePrograms,
  runReadmeProgram,
} from '../readme-examples.ts';
import {
  firstInstallLine,
  firstJsonBlock,
  readmeSection,
  rootInstallLine,
} from '../readme-install.mjs';
import {
  type PackedPackage,
  rehearseRelease,
  tarballInstallLine,
  withSiblings,
} from '../release-rehearsal.mjs';
import { root } from '../workspace.mjs';
import { runCopiedChatApp } from './copied-chat-app.ts';
import {
  ctxgraphNotFromTarballs,
  installedCopies,
  installedPackageFolders,
  npm,
  usePrebuilds,
} from './npm-project.ts';
import { readmeAppPackages, runReadmeApp } from './readme-app.ts';

type Major = '6' | '7';

/**
 * READMEs whose install lines the consumer project follows and whose examples it runs, in order.
 * An entry whose `requires` folder does not exist yet is skipped (the AI SDK integration, while
 * it is being written); add a package's README here to run its examples from the tarballs too.
 */
export const consumerReadmes: readonly { readme: string; requires?: string }[] = [
  { readme: 'README.md' },
  { readme: 'packages/ai-sdk/README.md', requires: 'packages/ai-sdk/package.json' },
  { readme: 'packages/client/README.md', requires: 'packages/client/package.json' },
];

/** The packages whose install footprint is measured, without and then with a tokenizer. */
export const footprintPackages: readonly string[] = [
  '@ctxgraph/engine',
  '@ctxgraph/codecs',
  '@ctxgraph/store-sqlite',
  '@ctxgraph/renderer-xml',
  'ai',
];
const footprintTokenizer = '@ctxgraph/tokenizer-o200k';

/** What one major measured and found. */
interface MajorResult {
  readonly major: Major;
  readonly node: string;
  readonly ai: string;
  readonly footprint: { packages: number; megabytes: number; withTokenizer: Footprint };
  readonly problems: string[];
}

interface Footprint {
  readonly packages: number;
  readonly megabytes: number;
}

/**
 * The major of each AI SDK companion package that goes with an AI SDK major, for install lines
 * that name one (the AI SDK integration's README may name `@ai-sdk/react`, say).
 */
const companions: Readonly<Record<Major, Readonly<Record<string, string>>>> = {
  '6': { ai: '6', '@ai-sdk/openai': '3', '@ai-sdk/react': '3' },
  '7': { ai: '7', '@ai-sdk/openai': '4', '@ai-sdk/react': '4' },
};

/** A registry package name with the run's major when it is an AI SDK one (`ai` → `ai@7`). */
function onMajor(name: string, major: Major): string {
  const pinned = companions[major][name];
  return pinned === undefined ? name : `${name}@${pinned}`;
}

/** The install arguments for `names`: tarballs for ours, the run's major for the AI SDK's. */
function installArguments(
  names: readonly string[],
  packed: readonly PackedPackage[],
  major: Major,
): string[] {
  const byName = new Map(packed.map((item) => [item.name, item]));
  const ours = withSiblings(names, packed).map((name) => byName.get(name)?.tarball as string);
  const others = names.filter((name) => !byName.has(name)).map((name) => onMajor(name, major));
  return [...ours, ...others];
}

function footprint(project: string): Footprint {
  const nodeModules = join(project, 'node_modules');
  const kilobytes = Number(
    execFileSync('du', ['-sk', nodeModules], { encoding: 'utf8' }).split(/\s/)[0],
  );
  return {
    packages: installedPackageFolders(nodeModules).length,
    megabytes: Math.round((kilobytes / 1024) * 10) / 10,
  };
}

const appSource = `import { assistant, user } from '@ctxgraph/codecs';
import { ContextEngine, type ModelResolveResult } from '@ctxgraph/engine';
import { hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { message } from '@ctxgraph/codecs';
import { simulateReadableStream, streamText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

const model = new MockLanguageModelV3({
  doStream: async () => ({
    stream: simulateReadableStream({
      chunks: [
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hello from a stream.' },
        { type: 'text-end', id: 't' },
        {
          type: 'finish',
          finishReason: { unified: 'stop', raw: undefined },
          usage: {
            inputTokens: { total: 5, noCache: 5, cacheRead: undefined, cacheWrite: undefined },
            outputTokens: { total: 4, text: 4, reasoning: undefined },
          },
        },
      ],
    }),
  }),
});

/** One streamed turn, its system-role message folded into \`system\` by the engine. */
export async function answer(question: string): Promise<string> {
  const engine = new ContextEngine({
    store: new SqliteContextStore(':memory:'),
    chatId: 'consumer-chat',
    userId: 'consumer-user',
    renderer: new XmlRenderer(),
  });
  engine.set(role('You are terse.'), hint('One sentence.'));
  engine.set(message({ id: 's1', role: 'system', parts: [{ type: 'text', text: 'Be kind.' }] }));
  engine.set(user(question, { id: 'q1' }));
  const resolved: ModelResolveResult = await engine.resolve({ format: 'model' });
  const result = streamText({ model, system: resolved.system, messages: resolved.messages });
  const text: string = await result.text;
  engine.set(assistant(text));
  await engine.save();
  return text;
}

console.log(await answer('Say hello'));
`;

function tsconfig(resolution: 'nodenext' | 'bundler'): string {
  const compilerOptions =
    resolution === 'nodenext'
      ? { module: 'nodenext', moduleResolution: 'nodenext' }
      : { module: 'preserve', moduleResolution: 'bundler' };
  return `${JSON.stringify(
    {
      compilerOptions: {
        ...compilerOptions,
        strict: true,
        target: 'es2022',
        lib: ['es2023'],
        types: ['node'],
        noEmit: true,
        skipLibCheck: false,
      },
      include: ['app/**/*.ts'],
    },
    null,
    2,
  )}\n`;
}

/** What every major shares: the packed packages, the folder they are in, the README's line. */
interface Setup {
  readonly packed: readonly PackedPackage[];
  /** The temporary folder holding `ctxgraph-tarballs` and, beside it, each major's project. */
  readonly base: string;
  /** The words of the root README's "Try it before the first release" install line. */
  readonly tryLine: readonly string[];
}

const tryItSection = 'Try it before the first release';
const tarballFolder = 'ctxgraph-tarballs';

async function runMajor(
  major: Major,
  setup: Setup,
  nodeMajor: number = majors[major].node,
): Promise<MajorResult> {
  if (nodeMajor < majors[major].node) {
    throw new Error(`AI SDK ${major} needs Node ${majors[major].node} or newer, not ${nodeMajor}.`);
  }
  const runtime = nodeRuntime(nodeMajor);
  const { packed } = setup;
  const problems: string[] = [];
  // Beside the tarballs' folder: the README's line reaches them as ../ctxgraph-tarballs/…
  const project = join(setup.base, `app-ai${major}`);
  mkdirSync(project);
  console.log(`\n=== AI SDK ${major} on Node ${runtime.version}: ${project}`);
  const prebuilds = betterSqlitePrebuilds(runtime, join(setup.base, `prebuilds-ai${major}`));
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify(
      {
        name: 'ctxgraph-consumer',
        private: true,
        type: 'module',
        overrides: { 'better-sqlite3': prebuilds.version },
      },
      null,
      2,
    )}\n`,
  );
  usePrebuilds(project, prebuilds.folder);
  const install = (names: readonly string[]): void => {
    console.log(`npm install ${names.join(' ')}`);
    npm(runtime, ['install', ...installArguments(names, packed, major)], project);
  };

  // The root README's install line first, alone, as its "Try it" section gives it (tarball
  // paths, as `release:rehearse --out` prints them): its footprint is the figure users see.
  const readmes = consumerReadmes.filter(
    (entry) => entry.requires === undefined || existsSync(join(root, entry.requires)),
  );
  const rootLine = rootInstallLine();
  if (rootLine.length === 0)
    problems.push("README.md's Install section has no `npm install` line.");
  for (const name of footprintPackages) {
    if (!rootLine.includes(name)) problems.push(`README.md's install line lacks ${name}.`);
  }
  const tryWords = setup.tryLine.map((word) =>
    word.startsWith('.') || word.startsWith('/') ? word : onMajor(word, major),
  );
  console.log(`npm install ${setup.tryLine.join(' ')}`);
  npm(runtime, ['install', ...tryWords], project);
  for (const found of ctxgraphNotFromTarballs(project)) {
    problems.push(`the "${tryItSection}" line left out a tarball: ${found}`);
  }
  const base = footprint(project);
  install([footprintTokenizer]);
  const withTokenizer = footprint(project);
  for (const { readme } of readmes.slice(1)) {
    install(installedPackages(readFileSync(join(root, readme), 'utf8')));
  }
  // What the examples import beyond the install lines (another store, say), as a user adds it.
  const present = new Set(
    installedPackageFolders(join(project, 'node_modules')).map(
      (folder) => JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).name as string,
    ),
  );
  const imported = readmes.flatMap(({ readme }) =>
    readmePrograms(readFileSync(join(root, readme), 'utf8')).flatMap((program) =>
      program.imports.map(packageOf),
    ),
  );
  const missing = [...new Set(imported)].filter(
    (name): name is string => name !== undefined && !present.has(name),
  );
  if (missing.length > 0) install(missing);

  // useChat's package, with what the root README's Install section says to add to package.json
  // (each @ai-sdk/react pins an exact `ai`: without the override, npm nests a second copy when
  // the project's is newer).
  const manifestPath = join(project, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const fromReadme = firstJsonBlock(
    readmeSection(readFileSync(join(root, 'README.md'), 'utf8'), 'Install'),
  );
  manifest.overrides = { ...manifest.overrides, ...(fromReadme.overrides as object | undefined) };
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  install(['@ai-sdk/react']);

  const aiCopies = installedCopies(project, 'ai');
  const aiVersions = aiCopies.map(({ version }) => version);
  if (aiCopies.length !== 1) {
    problems.push(
      `expected one copy of ai beside @ai-sdk/react, found ${aiCopies.length}: ${aiCopies.map(({ folder, version }) => `${version} in ${folder}`).join(', ')}`,
    );
  }
  if (!aiVersions.every((version) => version.startsWith(`${major}.`))) {
    problems.push(`expected ai ${major}.x, found ${aiVersions.join(', ')}`);
  }
  try {
    npm(runtime, ['ls', 'ai', '--all'], project);
  } catch (error) {
    problems.push(`npm ls ai --all: ${(error as Error).message}`);
  }

  // The checks' own tools come last, so they are not counted in the footprint.
  npm(
    runtime,
    ['install', '--save-dev', 'typescript@6.0.3', 'tsx@4', `@types/node@${majors[major].node}`],
    project,
  );
  const requireFromProject = createRequire(join(project, 'package.json'));
  const tsx = pathToFileURL(requireFromProject.resolve('tsx')).href;

  for (const { readme } of readmes) {
    const programs = readmePrograms(readFileSync(join(root, readme), 'utf8'));
    if (programs.length === 0) problems.push(`${readme} has no runnable example.`);
    for (const program of programs) {
      const where = `${readme}, example at line ${program.line}`;
      const outcome = await runReadmeProgram(program, {
        packageFolder: project,
        node: runtime.node,
        preload: [tsx],
        timeoutMs: 120_000,
      });
      const printed = outcome.stdout.trim().split('\n').filter(Boolean);
      const expected = expectedOutput(program);
      if (outcome.exitCode !== 0 || outcome.stderr !== '') {
        problems.push(`${where} failed (exit ${outcome.exitCode}):\n${outcome.stderr}`);
      } else if (JSON.stringify(printed) !== JSON.stringify(expected)) {
        problems.push(
          `${where} printed ${JSON.stringify(printed)}, not ${JSON.stringify(expected)}`,
        );
      } else {
        console.log(`ok   ${where}`);
      }
      mkdirSync(join(project, 'app'), { recursive: true });
      const file = `${readme.replace(/[^a-z0-9]+/gi, '-')}-line-${program.line}.ts`;
      writeFileSync(join(project, 'app', file), `${program.code}\nexport {};\n`);
    }
  }

  mkdirSync(join(project, 'app'), { recursive: true });
  writeFileSync(join(project, 'app', 'app.ts'), appSource);
  const tsc = requireFromProject.resolve('typescript/bin/tsc');
  for (const resolution of ['nodenext', 'bundler'] as const) {
    writeFileSync(join(project, `tsconfig.${resolution}.json`), tsconfig(resolution));
    const check = spawnSync(runtime.node, [tsc, '-p', `tsconfig.${resolution}.json`], {
      cwd: project,
      encoding: 'utf8',
    });
    // skipLibCheck is off so our declarations are checked as a user's compiler reads them;
    // the errors inside the AI SDK's own declarations (they assume the DOM lib and
    // @types/json-schema) are not ours to fix: counted and shown, not failed on.
    const errors = `${check.stdout}${check.stderr}`
      .split('\n')
      .filter((line) => /^\S.*\(\d+,\d+\): error /.test(line));
    const theirs = errors.filter(
      (line) => line.startsWith('node_modules/') && !line.startsWith('node_modules/@ctxgraph/'),
    );
    const ours = errors.filter((line) => !theirs.includes(line));
    if (check.status !== 0 && errors.length === 0) {
      problems.push(`tsc (strict, ${resolution}) failed:\n${check.stdout}${check.stderr}`);
    } else if (ours.length > 0) {
      problems.push(`tsc (strict, ${resolution}) failed:\n${ours.join('\n')}`);
    } else {
      const note =
        theirs.length === 0
          ? ''
          : ` (${theirs.length} errors inside third-party declarations, not ours: ${[
              ...new Set(theirs.map((line) => line.replace(/\(.*/, ''))),
            ].join(', ')})`;
      console.log(`ok   the app and the README examples type-check (strict, ${resolution})${note}`);
    }
  }
  const app = spawnSync(runtime.node, ['--import', tsx, join('app', 'app.ts')], {
    cwd: project,
    encoding: 'utf8',
  });
  if (app.status !== 0 || app.stdout.trim() !== 'Hello from a stream.') {
    problems.push(
      `the app (streamText with the engine's system) failed:\n${app.stdout}${app.stderr}`,
    );
  } else {
    console.log('ok   the app streams a reply with the folded system message');
  }
  // The ai-sdk README's whole app (a server and a useCtxgraphChat page), with what it needs
  // beside the project's packages.
  install(readmeAppPackages);
  npm(runtime, ['install', '--save-dev', '@types/react@19', '@types/react-dom@19'], project);
  problems.push(...(await runReadmeApp({ project, runtime, tsc, tsx })));
  if (problems.length === 0) {
    console.log(`ok   exactly one ai (${aiVersions[0]}), @ai-sdk/react included`);
  }
  return {
    major,
    node: runtime.version,
    ai: aiVersions.join(', '),
    footprint: { ...base, withTokenizer },
    problems,
  };
}

/**
 * The words of the README's "Try it" install line, and the problems with it: it must be the line
 * `release:rehearse --out ../ctxgraph-tarballs` prints for the root README's install line, seen
 * from a project folder beside the tarballs.
 */
function tryItLine(
  packed: readonly PackedPackage[],
  tarballs: string,
): {
  words: string[];
  problems: string[];
} {
  const section = readmeSection(readFileSync(join(root, 'README.md'), 'utf8'), tryItSection);
  const words = firstInstallLine(section);
  if (words.length === 0) {
    return {
      words,
      problems: [`README.md has no "${tryItSection}" section with an npm install line.`],
    };
  }
  const printed = tarballInstallLine(rootInstallLine(), packed, tarballs).replaceAll(
    `${tarballs}/`,
    `../${tarballFolder}/`,
  );
  const written = `npm install ${words.join(' ')}`;
  return {
    words,
    problems:
      printed === written
        ? []
        : [
            `README.md's "${tryItSection}" line is not what release:rehearse --out prints:\n  README:  ${written}\n  printed: ${printed}`,
          ],
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const majorFlag = argv.indexOf('--major');
  const chosen = majorFlag === -1 ? undefined : argv[majorFlag + 1];
  const nodeFlag = argv.indexOf('--node');
  const nodeMajor = nodeFlag === -1 ? undefined : Number(argv[nodeFlag + 1]);
  if (
    (chosen !== undefined && chosen !== '6' && chosen !== '7') ||
    (nodeMajor !== undefined && !Number.isInteger(nodeMajor))
  ) {
    console.error('usage: pnpm test:consumer [--major 6|7] [--node <major>] [--keep]');
    process.exit(2);
  }
  const toRun: Major[] = chosen === undefined ? ['6', '7'] : [chosen];
  const keep = argv.includes('--keep');
  const base = mkdtempSync(join(tmpdir(), 'ctxgraph-consumer-'));
  if (!relative(root, base).startsWith('..')) {
    throw new Error(`the consumer projects' folder ${base} is inside the workspace.`);
  }
  try {
    // As the README's "Try it" section does: `release:rehearse --out <folder>`.
    const tarballs = join(base, tarballFolder);
    mkdirSync(tarballs);
    const rehearsal = rehearseRelease({ packInto: tarballs });
    if (rehearsal.problems.length > 0) {
      for (const problem of rehearsal.problems) console.error(problem);
      process.exit(1);
    }
    const packed = rehearsal.packages;
    const tryIt = tryItLine(packed, tarballs);
    const results: MajorResult[] = [];
    for (const major of toRun) {
      results.push(await runMajor(major, { packed, base, tryLine: tryIt.words }, nodeMajor));
    }
    // The chat app declares its own `ai`: it runs on the Node that `ai` asks for.
    const appMajor = String(
      Number.parseInt(
        JSON.parse(readFileSync(join(root, 'apps', 'chat', 'package.json'), 'utf8')).dependencies
          .ai,
        10,
      ),
    ) as Major;
    const appProblems: string[] = [];
    if (toRun.includes(appMajor)) {
      const runtime = nodeRuntime(majors[appMajor].node);
      appProblems.push(
        ...(await runCopiedChatApp({
          folder: join(base, 'chat-app'),
          tarballs,
          packages: packed,
          runtime,
          prebuilds: betterSqlitePrebuilds(runtime, join(base, 'prebuilds-chat-app')).folder,
        })),
      );
    } else {
      console.log(`\n(the copied chat app runs with --major ${appMajor}, the major of its ai)`);
    }
    console.log('\nInstall footprint (packages / MB on disk under node_modules):');
    console.log(`| Major | ${footprintPackages.join(' + ')} | + ${footprintTokenizer} |`);
    console.log('| --- | ---: | ---: |');
    for (const { node, ai, footprint: size } of results) {
      console.log(
        `| ai ${ai} on Node ${node} | ${size.packages} / ${size.megabytes} MB | ${size.withTokenizer.packages} / ${size.withTokenizer.megabytes} MB |`,
      );
    }
    const problems = [
      ...tryIt.problems,
      ...results.flatMap((result) =>
        result.problems.map((problem) => `AI SDK ${result.major}: ${problem}`),
      ),
      ...appProblems.map((problem) => `apps/chat copied out: ${problem}`),
    ];
    for (const problem of problems) console.error(`FAILED ${problem}`);
    console.log(
      problems.length === 0
        ? `consumer test: passed on ${results.map((result) => `ai ${result.ai} / Node ${result.node}`).join(' and ')}${toRun.includes(appMajor) ? ', and the copied chat app' : ''}`
        : `consumer test: ${problems.length} problems`,
    );
    process.exitCode = problems.length === 0 ? 0 : 1;
  } finally {
    if (keep) console.log(`kept ${base}`);
    else rmSync(base, { recursive: true, force: true });
  }
}

await main();
