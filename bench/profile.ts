// Optional CPU profile of a bench's measured phase: set BENCH_CPU_PROFILE=<file.cpuprofile> and open
// the file in Chrome DevTools (Performance → Load profile) or speedscope.
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

export async function startProfile(file: string | undefined): Promise<{ stop(): Promise<void> }> {
  if (!file) return { stop: async () => undefined };
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(file, JSON.stringify(profile));
      session.disconnect();
      console.error(`cpu profile written to ${file}`);
    },
  };
}
