// The worker the edge test bundles and runs inside workerd: it runs the scenario and answers
// with its JSON, or with the error's name, message and stack (status 500).
import { runScenario } from './scenario';

const worker: { fetch(request: Request): Promise<Response> } = {
  async fetch() {
    try {
      return Response.json(await runScenario());
    } catch (error) {
      const { name, message, stack } = error instanceof Error ? error : new Error(String(error));
      return Response.json({ error: { name, message, stack } }, { status: 500 });
    }
  },
};

export default worker;
