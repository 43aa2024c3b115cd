// The cycle's background step: the compaction the engine's cost policy deferred, run after the
// reply is saved, so no request waits for the summary.
import type { AutoCompaction } from '@ctxgraph/engine';
import type { UIMessage } from 'ai';
import type { AttachedChat } from './attach';
import type { ChatEngines } from './chat-engines';

/** What {@link ChatCycleOptions.onCompaction} is told of a compaction the cycle ran. */
export interface CompactionEvent {
  readonly chatId: string;
  /** The branch compacted. */
  readonly branch: string;
  /**
   * What it did: `'compacted'` (the summary node was written), `'superseded'` (another engine
   * or process compacted the branch first, or one is under way in this cycle: nothing written),
   * `'failed'` (nothing written; `error` says why), `'nothing-to-compact'`.
   */
  readonly outcome: AutoCompaction;
}

/** What the background step needs of the cycle. */
export interface BackgroundSettings<UI_MESSAGE extends UIMessage = UIMessage> {
  readonly engines: ChatEngines<UI_MESSAGE>;
  /** Chats with a background compaction under way in this cycle. */
  readonly compacting: Set<string>;
  readonly onCompaction: ((event: CompactionEvent) => void) | undefined;
  readonly waitUntil: ((promise: Promise<unknown>) => void) | undefined;
}

/**
 * Runs the turn's deferred compaction on its engine, after its reply was saved, and gives the
 * engine back to the warm pool once it is done (a request meanwhile gets an engine of its own,
 * so it never waits for the summary). One at a time per chat in this cycle; across engines and
 * processes, the engine writes at most one compaction of a branch (the later one is
 * `'superseded'`). Never rejects: an unexpected error is a `'failed'` outcome, told to
 * `onCompaction` like every outcome, and the engine is dropped. The promise goes to `waitUntil`
 * when the cycle has one (Workers: `ctx.waitUntil`), so the runtime keeps the request alive for it.
 */
export function compactInBackground<UI_MESSAGE extends UIMessage>(
  attached: AttachedChat<UI_MESSAGE>,
  chatId: string,
  settings: BackgroundSettings<UI_MESSAGE>,
): Promise<AutoCompaction | undefined> {
  const branch = attached.engine.branch;
  const run = async (): Promise<AutoCompaction | undefined> => {
    if (settings.compacting.has(chatId)) {
      settings.engines.give(attached);
      return report({ status: 'superseded' });
    }
    settings.compacting.add(chatId);
    let outcome: AutoCompaction | undefined;
    try {
      outcome = await attached.engine.runDeferredCompaction();
      settings.engines.give(attached);
    } catch (error) {
      outcome = { status: 'failed', error: error instanceof Error ? error.message : String(error) };
    } finally {
      settings.compacting.delete(chatId);
    }
    return outcome === undefined ? undefined : report(outcome);
  };
  const report = (outcome: AutoCompaction): AutoCompaction => {
    try {
      settings.onCompaction?.({ chatId, branch, outcome });
    } catch {
      // The app's callback failing changes nothing that was written.
    }
    return outcome;
  };
  const task = run();
  settings.waitUntil?.(task);
  return task;
}
