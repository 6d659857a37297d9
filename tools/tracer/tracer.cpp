// libmemhier_tracer.so: a Compute Sanitizer injection library that records the memory accesses of any CUDA program
// into a .mht trace. Loaded through CUDA_INJECTION64_PATH (`memhier trace capture` sets it up). Per context it loads
// the device patches and one record buffer; per matching launch it attaches the buffer, waits for the launch at its end
// (callbacks may not call CUDA, the Sanitizer API synchronizes), copies the records out and writes one .mht kernel.
// Records that do not fit the buffer are counted and reported, never dropped silently.
#include <cuda.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <sanitizer.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "memhier/mht.h"
#include "memhier/trace_json.h"
#include "name_regex.h"
#include "tracer_decode.h"
#include "tracer_record.h"

namespace memhier::tracer {
namespace {

std::string env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

struct Config {
  std::string out;
  std::string patches;
  std::regex kernel{".*"};
  std::uint64_t first = 0, last = ~0ULL;  // matching launches [first, last) are captured
  std::uint32_t sample = 1;
  std::uint64_t buffer_bytes = 2048ULL << 20U;
  std::string summary;
  std::string arch;
};

struct ContextState {
  TraceHeader* buffer = nullptr;    // header + records, device memory
  TraceHeader* disabled = nullptr;  // header with enabled = 0, for launches that are not captured
  bool patches_loaded = false;
};

struct Pending {
  KernelLaunch launch;
  std::uint64_t function_pc = 0;
  ContextState* state = nullptr;
  TraceHeader host_header{};
};

// Launch geometry from the Sanitizer; registers, static shared and local memory from the driver. The driver calls are
// the only CUDA calls made inside a callback; they query, never enqueue.
KernelLaunch launch_facts(const Sanitizer_LaunchData& l, const std::string& name, const std::string& arch_override) {
  KernelLaunch k;
  k.name = name;
  k.grid = {l.gridDim_x, l.gridDim_y, l.gridDim_z};
  k.block = {l.blockDim_x, l.blockDim_y, l.blockDim_z};
  k.cluster = {std::max(l.clusterDim_x, 1U), std::max(l.clusterDim_y, 1U), std::max(l.clusterDim_z, 1U)};
  int value = 0;
  if (cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, l.function) == CUDA_SUCCESS)
    k.registers_per_thread = static_cast<std::uint32_t>(value);
  if (cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, l.function) == CUDA_SUCCESS)
    k.static_shared_bytes = static_cast<std::uint32_t>(value);
  if (cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, l.function) == CUDA_SUCCESS)
    k.local_bytes_per_thread = static_cast<std::uint32_t>(value);
  k.captured_arch = arch_override;
  if (k.captured_arch.empty()) {
    char device[256] = {};
    if (cuDeviceGetName(device, sizeof device, l.device) == CUDA_SUCCESS)
      k.captured_arch = arch_from_device_name(device);
  }
  k.source = "memhier tracer";
  return k;
}

// Driver-API arguments as the callbacks pass them (the *_params structs of CUDA's generated_cuda_meta.h, which does not
// compile against CUDA 13's cuda.h on its own): each is the function's parameter list.
struct LaunchKernelExParams {  // cuLaunchKernelEx, cuLaunchKernelEx_ptsz
  const CUlaunchConfig* config;
  CUfunction f;
  void** kernel_params;
  void** extra;
};
struct CtxSetLimitParams {  // cuCtxSetLimit
  CUlimit limit;
  std::size_t value;
};
struct StreamSetAttributeParams {  // cuStreamSetAttribute, cuStreamSetAttribute_ptsz
  CUstream stream;
  CUstreamAttrID attr;
  const CUstreamAttrValue* value;
};

AccessPolicyWindow window_of(const CUaccessPolicyWindow& w) {
  auto property = [](CUaccessProperty p) {
    return p == CU_ACCESS_PROPERTY_PERSISTING  ? L2Property::persisting
           : p == CU_ACCESS_PROPERTY_STREAMING ? L2Property::streaming
                                               : L2Property::normal;
  };
  AccessPolicyWindow out;
  out.base = reinterpret_cast<std::uint64_t>(w.base_ptr);
  out.bytes = w.num_bytes;
  out.hit_ratio = static_cast<double>(w.hitRatio);
  out.hit_prop = property(w.hitProp);
  out.miss_prop = property(w.missProp);
  return out;
}

class Tracer {
 public:
  Tracer() { configure(); }
  ~Tracer() { finish(); }

  void callback(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void* data);
  void finish();

 private:
  void configure();
  void fail(const std::string& what);
  ContextState& context(CUcontext ctx);
  void module_loaded(const Sanitizer_ResourceModuleData& m);
  void launch_begin(const Sanitizer_LaunchData& l);
  void launch_end(const Sanitizer_LaunchData& l);
  void driver_api(Sanitizer_CallbackId cbid, const Sanitizer_CallbackData& d);

  Config m_cfg;
  std::recursive_mutex m_mutex;  // Sanitizer calls made inside a callback can raise further callbacks
  std::map<CUcontext, ContextState> m_contexts;
  std::map<Sanitizer_LaunchHandle, Pending> m_pending;
  // L2 residency control, followed through the driver calls that set it (a query from inside a launch callback can
  // deadlock, so none is made): the access-policy window of the cuLaunchKernelEx between its entry and exit (num_bytes
  // 0 if it set none), each stream's window, each context's persisting set-aside as asked (the model rounds it up to
  // whole L2 ways, as the driver grants it), and cuCtxResetPersistingL2Cache calls not yet followed by a launch.
  std::map<std::thread::id, CUaccessPolicyWindow> m_launch_window;
  std::map<CUstream, CUaccessPolicyWindow> m_stream_window;
  std::map<CUcontext, std::uint64_t> m_set_aside;
  std::map<CUcontext, bool> m_reset_pending;
  std::unique_ptr<MhtWriter> m_writer;
  std::uint64_t m_matched = 0;
  bool m_failed = false;
  bool m_finished = false;
  bool m_in_callback = false;
  bool m_verbose = false;
  nlohmann::json m_summary = nlohmann::json::array();
};

void Tracer::configure() {
  m_cfg.out = env("MEMHIER_TRACE_OUT");
  m_verbose = !env("MEMHIER_TRACE_VERBOSE").empty();
  m_cfg.summary = env("MEMHIER_TRACE_SUMMARY");
  m_cfg.arch = env("MEMHIER_TRACE_ARCH");
  m_cfg.patches = env("MEMHIER_TRACE_PATCHES");
  if (m_cfg.patches.empty()) {  // next to this library
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&env), &info) != 0 && info.dli_fname != nullptr)
      m_cfg.patches = (std::filesystem::path(info.dli_fname).parent_path() / "memhier_tracer_patches.fatbin").string();
  }
  try {
    m_cfg.kernel = name_regex(env("MEMHIER_TRACE_KERNEL", ".*"));
    const std::string launches = env("MEMHIER_TRACE_LAUNCHES");
    if (!launches.empty()) {
      const auto colon = launches.find(':');
      m_cfg.first = std::stoull(launches.substr(0, colon));
      m_cfg.last = colon == std::string::npos    ? m_cfg.first + 1
                   : colon + 1 < launches.size() ? std::stoull(launches.substr(colon + 1))
                                                 : ~0ULL;
    }
    m_cfg.sample = static_cast<std::uint32_t>(std::stoul(env("MEMHIER_TRACE_SAMPLE", "1")));
    m_cfg.buffer_bytes = std::stoull(env("MEMHIER_TRACE_BUFFER_MIB", "2048")) << 20U;
  } catch (const std::exception& e) {
    fail(std::string("bad MEMHIER_TRACE_* setting: ") + e.what());
  }
  if (m_cfg.out.empty()) fail("MEMHIER_TRACE_OUT is not set (run through `memhier trace capture`)");
  if (m_cfg.sample == 0) m_cfg.sample = 1;
  if (!m_failed) m_writer = std::make_unique<MhtWriter>(m_cfg.out);
}

void Tracer::fail(const std::string& what) {
  std::fprintf(stderr, "memhier tracer: %s; capture stopped\n", what.c_str());
  m_summary.push_back({{"error", what}});
  m_failed = true;
}

ContextState& Tracer::context(CUcontext ctx) {
  ContextState& s = m_contexts[ctx];
  if (!s.patches_loaded && !m_failed) {
    if (sanitizerAddPatchesFromFile(m_cfg.patches.c_str(), ctx) != SANITIZER_SUCCESS) {
      fail("cannot load the device patches " + m_cfg.patches);
      return s;
    }
    void* buffer = nullptr;
    void* disabled = nullptr;
    if (sanitizerAlloc(ctx, &buffer, sizeof(TraceHeader) + m_cfg.buffer_bytes) != SANITIZER_SUCCESS ||
        sanitizerAlloc(ctx, &disabled, sizeof(TraceHeader)) != SANITIZER_SUCCESS) {
      fail("cannot allocate " + std::to_string(m_cfg.buffer_bytes >> 20U) + " MiB of device memory for records");
      return s;
    }
    s.buffer = static_cast<TraceHeader*>(buffer);
    s.disabled = static_cast<TraceHeader*>(disabled);
    s.patches_loaded = true;
  }
  return s;
}

void Tracer::module_loaded(const Sanitizer_ResourceModuleData& m) {
  ContextState& s = context(m.context);
  if (!s.patches_loaded) return;
  const std::pair<Sanitizer_InstructionId, const char*> patches[] = {
      {SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS, "memhier_global_access"},
      {SANITIZER_INSTRUCTION_SHARED_MEMORY_ACCESS, "memhier_shared_access"},
      {SANITIZER_INSTRUCTION_LOCAL_MEMORY_ACCESS, "memhier_local_access"},
      {SANITIZER_INSTRUCTION_BARRIER, "memhier_barrier"},
      {SANITIZER_INSTRUCTION_MEMCPY_ASYNC, "memhier_memcpy_async"},
      {SANITIZER_INSTRUCTION_BULK_COPY_GLOBAL_TO_SHARED, "memhier_bulk_copy"},
  };
  for (const auto& [kind, name] : patches)
    if (sanitizerPatchInstructions(kind, m.module, name) != SANITIZER_SUCCESS)
      return fail(std::string("cannot patch instructions with ") + name);
  if (sanitizerPatchModule(m.module) != SANITIZER_SUCCESS) fail("cannot patch a module");
}

void Tracer::launch_begin(const Sanitizer_LaunchData& l) {
  ContextState& s = context(l.context);
  if (!s.patches_loaded) return;
  const std::string name = demangled_name(l.functionName);
  const bool matches = std::regex_search(name, m_cfg.kernel);
  const bool capture = !m_failed && matches && m_matched >= m_cfg.first && m_matched < m_cfg.last;
  if (matches) ++m_matched;
  if (!capture) {
    static const TraceHeader off{};
    sanitizerMemcpyHostToDeviceAsync(s.disabled, const_cast<TraceHeader*>(&off), sizeof off, l.hStream);
    sanitizerSetLaunchCallbackData(l.hLaunch, l.function, l.hStream, s.disabled);
    return;
  }
  Pending& p = m_pending[l.hLaunch];
  p.state = &s;
  p.launch = launch_facts(l, name, m_cfg.arch);
  const auto ex = m_launch_window.find(std::this_thread::get_id());
  const auto st = m_stream_window.find(l.stream);
  const CUaccessPolicyWindow* window = ex != m_launch_window.end()   ? &ex->second
                                       : st != m_stream_window.end() ? &st->second
                                                                     : nullptr;
  if (window != nullptr && window->num_bytes > 0) p.launch.windows.push_back(window_of(*window));
  p.launch.persisting_set_aside_bytes = m_set_aside[l.context];
  p.launch.reset_persisting = std::exchange(m_reset_pending[l.context], false);
  std::uint64_t size = 0;
  if (sanitizerGetFunctionPcAndSize(l.module, l.functionName, &p.function_pc, &size) != SANITIZER_SUCCESS)
    p.function_pc = 0;
  p.host_header = TraceHeader{};
  p.host_header.capacity = m_cfg.buffer_bytes;
  p.host_header.valid_end = ~0ULL;
  p.host_header.enabled = 1;
  p.host_header.sample = m_cfg.sample;
  sanitizerMemcpyHostToDeviceAsync(s.buffer, &p.host_header, sizeof p.host_header, l.hStream);
  sanitizerSetLaunchCallbackData(l.hLaunch, l.function, l.hStream, s.buffer);
}

void Tracer::launch_end(const Sanitizer_LaunchData& l) {
  auto it = m_pending.find(l.hLaunch);
  if (it == m_pending.end()) return;
  Pending p = std::move(it->second);
  m_pending.erase(it);
  if (sanitizerStreamSynchronize(l.hStream) != SANITIZER_SUCCESS) return fail("cannot wait for " + p.launch.name);
  TraceHeader h{};
  sanitizerMemcpyDeviceToHost(&h, p.state->buffer, sizeof h, l.hStream);
  const std::uint64_t kept = std::min({h.used, h.capacity, h.valid_end});
  std::vector<unsigned char> bytes(kept);
  if (kept > 0) sanitizerMemcpyDeviceToHost(bytes.data(), p.state->buffer + 1, kept, l.hStream);
  try {
    const DecodeStats stats = write_launch(*m_writer, p.launch, p.function_pc, m_cfg.sample, bytes);
    m_summary.push_back({{"kernel", p.launch.name},
                         {"grid", {p.launch.grid.x, p.launch.grid.y, p.launch.grid.z}},
                         {"block", {p.launch.block.x, p.launch.block.y, p.launch.block.z}},
                         {"records", stats.records},
                         {"lane_accesses", stats.lane_accesses},
                         {"bytes", kept},
                         {"dropped_records", h.dropped_records},
                         {"bytes_needed", h.used}});
    if (h.dropped_records > 0)
      std::fprintf(stderr,
                   "memhier tracer: %s: %llu warp records did not fit the %llu MiB buffer (needs %llu MiB); raise "
                   "--buffer-mib or sample blocks\n",
                   p.launch.name.c_str(), h.dropped_records, static_cast<unsigned long long>(m_cfg.buffer_bytes >> 20U),
                   (h.used >> 20U) + 1);
  } catch (const std::exception& e) {
    fail(std::string("cannot write the trace: ") + e.what());
  }
}

void Tracer::driver_api(Sanitizer_CallbackId cbid, const Sanitizer_CallbackData& d) {
  const bool ok = d.callbackSite == SANITIZER_API_EXIT && d.functionReturnValue != nullptr &&
                  *static_cast<const CUresult*>(d.functionReturnValue) == CUDA_SUCCESS;
  if (cbid == SANITIZER_CBID_DRIVER_API_cuCtxResetPersistingL2Cache) {
    if (ok) m_reset_pending[d.context] = true;
    return;
  }
  if (cbid == SANITIZER_CBID_DRIVER_API_cuCtxSetLimit) {
    const auto* p = static_cast<const CtxSetLimitParams*>(d.functionParams);
    if (ok && p->limit == CU_LIMIT_PERSISTING_L2_CACHE_SIZE) m_set_aside[d.context] = p->value;
    return;
  }
  if (cbid == SANITIZER_CBID_DRIVER_API_cuStreamSetAttribute ||
      cbid == SANITIZER_CBID_DRIVER_API_cuStreamSetAttribute_ptsz) {
    const auto* p = static_cast<const StreamSetAttributeParams*>(d.functionParams);
    if (ok && p->attr == CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW && p->value != nullptr)
      m_stream_window[p->stream] = p->value->accessPolicyWindow;
    return;
  }
  // cuLaunchKernelEx and its per-thread-stream twin have the same parameters.
  if (cbid != SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx && cbid != SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx_ptsz)
    return;
  if (d.callbackSite == SANITIZER_API_EXIT) {
    m_launch_window.erase(std::this_thread::get_id());
    return;
  }
  CUaccessPolicyWindow window{};
  const CUlaunchConfig* config = static_cast<const LaunchKernelExParams*>(d.functionParams)->config;
  if (config != nullptr)
    for (unsigned i = 0; i < config->numAttrs; ++i)
      if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW)
        window = config->attrs[i].value.accessPolicyWindow;
  m_launch_window[std::this_thread::get_id()] = window;
}

void Tracer::callback(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void* data) {
  std::lock_guard<std::recursive_mutex> lock(m_mutex);
  if (m_finished || m_in_callback) return;  // ignore what our own Sanitizer calls raise
  m_in_callback = true;
  struct Leave {
    bool& flag;
    ~Leave() { flag = false; }
  } leave{m_in_callback};
  if (m_verbose)
    std::fprintf(stderr, "memhier tracer: callback domain %d id %d\n", static_cast<int>(domain),
                 static_cast<int>(cbid));
  if (domain == SANITIZER_CB_DOMAIN_RESOURCE && cbid == SANITIZER_CBID_RESOURCE_MODULE_LOADED)
    module_loaded(*static_cast<const Sanitizer_ResourceModuleData*>(data));
  else if (domain == SANITIZER_CB_DOMAIN_LAUNCH && cbid == SANITIZER_CBID_LAUNCH_BEGIN)
    launch_begin(*static_cast<const Sanitizer_LaunchData*>(data));
  else if (domain == SANITIZER_CB_DOMAIN_LAUNCH && cbid == SANITIZER_CBID_LAUNCH_END)
    launch_end(*static_cast<const Sanitizer_LaunchData*>(data));
  else if (domain == SANITIZER_CB_DOMAIN_DRIVER_API)
    driver_api(cbid, *static_cast<const Sanitizer_CallbackData*>(data));
}

void Tracer::finish() {
  std::lock_guard<std::recursive_mutex> lock(m_mutex);
  if (m_finished) return;
  m_finished = true;
  try {
    if (m_writer) m_writer->close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memhier tracer: cannot finish %s: %s\n", m_cfg.out.c_str(), e.what());
  }
  if (!m_cfg.summary.empty()) std::ofstream(m_cfg.summary) << memhier::json_text(m_summary, 1) << "\n";
}

Tracer* g_tracer = nullptr;

void SANITIZERAPI on_callback(void*, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void* data) {
  if (g_tracer != nullptr) g_tracer->callback(domain, cbid, data);
}

void at_exit() {
  if (g_tracer != nullptr) g_tracer->finish();
}

}  // namespace
}  // namespace memhier::tracer

extern "C" int InitializeInjection() {
  using namespace memhier::tracer;
  if (g_tracer != nullptr) return 0;  // both the driver and the static initializer may call this
  g_tracer = new Tracer();            // lives until exit: callbacks can arrive from static destructors
  Sanitizer_SubscriberHandle handle = nullptr;
  if (sanitizerSubscribe(&handle, on_callback, nullptr) != SANITIZER_SUCCESS) {
    std::fprintf(stderr, "memhier tracer: cannot subscribe to the Sanitizer API (another tool already did?)\n");
    return 1;
  }
  sanitizerEnableDomain(1, handle, SANITIZER_CB_DOMAIN_RESOURCE);
  sanitizerEnableDomain(1, handle, SANITIZER_CB_DOMAIN_LAUNCH);
  // Only the calls that set L2 residency per launch: every other driver call stays callback-free.
  for (Sanitizer_CallbackId cbid :
       {SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx, SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx_ptsz,
        SANITIZER_CBID_DRIVER_API_cuCtxResetPersistingL2Cache, SANITIZER_CBID_DRIVER_API_cuCtxSetLimit,
        SANITIZER_CBID_DRIVER_API_cuStreamSetAttribute, SANITIZER_CBID_DRIVER_API_cuStreamSetAttribute_ptsz})
    sanitizerEnableCallback(1, handle, SANITIZER_CB_DOMAIN_DRIVER_API, cbid);
  std::atexit(at_exit);
  return 0;
}

namespace {
// LD_PRELOAD path: subscribe before the program's first CUDA call.
const int g_initialized = InitializeInjection();
}  // namespace
