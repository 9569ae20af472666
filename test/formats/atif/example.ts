/** The example trajectory of the ATIF facts (docs/formats.md#atif-in), as Harbor's models accept it. */
export function exampleAtif(): Record<string, any> {
  return {
    schema_version: 'ATIF-v1.7',
    session_id: 'run-7f3a',
    agent: {
      name: 'winnower-agent',
      version: '0.1.0',
      model_name: 'qwen3-coder',
      tool_definitions: [
        {
          type: 'function',
          function: {
            name: 'bash',
            description: 'Run a shell command',
            parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
          },
        },
      ],
    },
    steps: [
      { step_id: 1, source: 'system', message: 'You are a careful engineer.' },
      { step_id: 2, source: 'user', message: 'Fix median() in /app/stats.py.', timestamp: '2026-09-01T12:00:00Z' },
      {
        step_id: 3,
        source: 'agent',
        message: '',
        reasoning_content: 'Look at the code first.',
        tool_calls: [
          { tool_call_id: 'call_1', function_name: 'bash', arguments: { cmd: 'cat /app/stats.py' } },
          { tool_call_id: 'call_2', function_name: 'bash', arguments: { cmd: 'python -m pytest -q' } },
        ],
        observation: {
          results: [
            { source_call_id: 'call_1', content: 'def median(xs): ...' },
            { source_call_id: 'call_2', content: '1 failed, 2 passed', extra: { exit_code: 1 } },
          ],
        },
        metrics: { prompt_tokens: 812, completion_tokens: 64, cached_tokens: 512 },
        llm_call_count: 1,
      },
      {
        step_id: 4,
        source: 'agent',
        message: 'Fixed the even-length branch; all tests pass.',
        metrics: { prompt_tokens: 990, completion_tokens: 21, cached_tokens: 800 },
        llm_call_count: 1,
        extra: { finish_reason: 'stop' },
      },
    ],
    final_metrics: { total_prompt_tokens: 1802, total_completion_tokens: 85, total_cached_tokens: 1312, total_steps: 4 },
    extra: { instance_id: 'fix-median', exit: 'submitted' },
  };
}
