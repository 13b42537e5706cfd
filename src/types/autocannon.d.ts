declare module 'autocannon' {
  interface Histogram { p50: number; p99: number; average: number; max: number }
  interface Result { requests: Histogram & { total: number; sent: number }; latency: Histogram; non2xx: number; errors: number; duration: number; '2xx': number }
  interface Options { url: string; connections?: number; duration?: number; amount?: number; method?: string; headers?: Record<string, string>; body?: string; pipelining?: number }
  function autocannon(opts: Options): Promise<Result>;
  export = autocannon;
}
