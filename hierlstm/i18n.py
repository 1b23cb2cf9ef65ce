"""The app's one message catalogue: every text in English and Simplified Chinese.

`t(key, lang, **values)` formats a message with `str.format`; both languages of a message take
the same fields. Pages, `hierlstm.app`, the CLI and the trace notes take their words from here and
nowhere else. Names that are code (variant names such as `folded`, layer names, Keras classes)
stay as they are in both languages. No Streamlit here.
"""

# ruff: noqa: E501  (ruff counts each Chinese character as two columns; catalogue lines wrap
# at sentence boundaries instead)

from __future__ import annotations

LANGUAGES = {"en": "English", "zh": "简体中文"}
DEFAULT_LANGUAGE = "en"


def _m(en: str, zh: str) -> dict[str, str]:
    return {"en": en, "zh": zh}


# The input step's note, also the end of its note under a strategy (after the split).
_NOTE_INPUT = (
    "{batch} spectrograms of {height} rows (e.g. frequency bins) x {time} time steps, one channel.",
    "{batch} 个频谱图，每个 {height} 行（如频率 bin）× {time} 个时间步，单通道。",
)

MESSAGES: dict[str, dict[str, str]] = {
    # --- frame -----------------------------------------------------------------------------
    "page.shape_trace": _m("Shape trace", "形状追踪"),
    "page.benchmark": _m("Benchmark", "基准测试"),
    "page.profile": _m("Profile", "性能剖析"),
    "page.scaling": _m("Scaling", "规模扩展"),
    "page.weight_sharing": _m("Weight sharing", "权重共享"),
    "page.results": _m("Results", "结果"),
    "page.lesson": _m("Lesson", "课程"),
    "sidebar.settings": _m("Settings", "设置"),
    "run.trace": _m("Update trace", "更新追踪"),
    "run.benchmark": _m("Run benchmark", "运行基准测试"),
    "run.profile": _m("Profile", "开始剖析"),
    "run.sweep": _m("Run sweep", "运行扫描"),
    "run.sharing": _m("Apply and time both forms", "应用并计时两种形式"),
    "run.apply": _m("Apply settings", "应用设置"),
    "run.lesson": _m("Measure the lesson's numbers", "测量课程中的数字"),
    "run.starting": _m("Starting…", "正在开始…"),
    "run.left": _m("{message} · about {seconds} s left", "{message} · 约剩 {seconds} 秒"),
    "run.waiting": _m(
        "Waiting for another run to finish ({holder}, {seconds:.0f} s so far): one timing run "
        "per device at a time, across every app server and the CLI, keeps the numbers honest. "
        "The wait is not timed.",
        "正在等待另一次运行结束（{holder}，已等待 {seconds:.0f} 秒）：所有应用服务器和命令行中，每个设备同一时间"
        "只做一次计时，数字才可信。等待时间不计入计时。",
    ),
    "run.waiting.viewer": _m("{what} of another viewer", "其他访问者的{what}"),
    "run.waiting.server": _m("{what} in the app, pid {pid}", "应用中的{what}，进程 {pid}"),
    "run.waiting.cli": _m("the CLI, pid {pid}", "命令行，进程 {pid}"),
    "run.waiting.other": _m("another program, pid {pid}", "另一个程序，进程 {pid}"),
    "run.calibrating": _m(
        "Measuring this machine's cost per step for {variant} (once per setting) to estimate "
        "the run…",
        "正在测量本机上 {variant} 每步的耗时（每种设置只测一次），以估算运行时间…",
    ),
    "run.confirm": _m(
        "This run is estimated at about {seconds:,.0f} s ({runs} timed configuration(s)), over "
        "this server's {limit:,.0f} s for a run without asking. The estimate is the cost model "
        "times this machine's measured cost per step. Run it anyway?",
        "估计此次运行约需 {seconds:,.0f} 秒（{runs} 个计时配置），超过本服务器无需确认的 {limit:,.0f} 秒。"
        "估计值为成本模型乘以本机实测的每步耗时。仍要运行吗？",
    ),
    "run.confirm.yes": _m("Run (about {seconds:,.0f} s)", "运行（约 {seconds:,.0f} 秒）"),
    "run.confirm.unknown": _m(
        "This run's duration cannot be estimated: measuring this machine's cost per step failed "
        "({reasons}), so that run may fail too, or take any time ({runs} timed configuration(s)). "
        "Run it anyway?",
        "无法估计此次运行的时长：测量本机每步耗时失败（{reasons}），所以这次运行也可能失败，或耗时不定"
        "（{runs} 个计时配置）。仍要运行吗？",
    ),
    "run.confirm.yes.unknown": _m("Run it", "运行"),
    "run.confirm.no": _m("Cancel", "取消"),
    "lock.benchmark": _m("a benchmark", "一次基准测试"),
    "lock.profile": _m("a profile", "一次性能剖析"),
    "lock.warmup": _m("the server's warm-up", "服务器预热"),
    "lock.scaling": _m("a sweep", "一次扫描"),
    "lock.weight_sharing": _m("a weight-sharing timing", "一次权重共享计时"),
    "lock.lesson": _m("the lesson's measurements", "课程中的测量"),
    "page.failed": _m(
        "hierlstm hit an internal error, logged on the server: {error}",
        "hierlstm 内部出错（已记录在服务器日志中）：{error}",
    ),
    "trace.failed": _m("Could not trace {variant}: {error}", "无法追踪 {variant}：{error}"),
    "run.failed": _m("The run failed: {error}", "运行失败：{error}"),
    "run.over_limit": _m("Not run: {reason}", "未运行：{reason}"),
    "url.rejected": _m(
        "Link parameter {name}={value} ignored, default used: {reason}",
        "链接参数 {name}={value} 无效，已使用默认值：{reason}",
    ),
    "download.chart_csv": _m("Chart data (CSV)", "图表数据（CSV）"),
    # --- sidebar controls ----------------------------------------------------------------------
    "control.variants": _m("Variants", "变体"),
    "control.variants.help": _m(
        "Execution strategies of the same model (same function, same parameters). The first one "
        "is the one the single-variant parts use.",
        "同一模型的不同执行策略（同一函数、同一组参数）。只用一个变体的地方使用第一个。",
    ),
    "control.variants.placeholder": _m("Choose variants", "选择变体"),
    "control.variants.none": _m(
        "No variant chosen; using {default}.", "未选择变体；使用 {default}。"
    ),
    "control.time_steps": _m("Time steps", "时间步数"),
    "control.time_steps.help": _m(
        "Length of the outer sequence (the input's time axis).", "外层序列的长度（输入的时间轴）。"
    ),
    "control.batch_size": _m("Batch size", "批量大小"),
    "control.batch_size.help": _m("Spectrograms per forward pass.", "每次前向传播的频谱图数量。"),
    "control.precision": _m("Precision", "精度"),
    "control.precision.help": _m(
        "A per-layer dtype policy (never Keras's global policy). Mixed precision computes in "
        "16-bit and keeps float32 variables.",
        "逐层的 dtype 策略（从不使用 Keras 全局策略）。混合精度用 16 位计算，变量保持 float32。",
    ),
    "control.task": _m("Measure", "测量"),
    "control.task.help": _m(
        "What is timed: one forward pass (inference), or one training step: the forward pass "
        "with training=True, the loss (mean squared error to a fixed target), the gradients of "
        "every parameter through both recurrences, and the optimizer's update.",
        "计时的内容：一次前向传播（推理），或一次训练步：training=True 的前向、损失（与固定目标的均方误差）、"
        "穿过两层循环求出每个参数的梯度，以及优化器的更新。",
    ),
    "task.inference": _m("forward pass", "前向传播"),
    "task.training": _m("training step", "训练步"),
    "control.optimizer": _m("Optimizer", "优化器"),
    "control.optimizer.help": _m(
        "The update of a training step (Keras's SGD or Adam; Adam keeps two slots per "
        "parameter). A forward pass does not use it.",
        "训练步的更新（Keras 的 SGD 或 Adam；Adam 为每个参数保存两个槽）。前向传播不使用它。",
    ),
    "control.lstm_kernel": _m("LSTM kernel", "LSTM 内核"),
    "control.lstm_kernel.help": _m(
        "auto: Keras takes the fused cuDNN kernel when it can (a GPU, default activations, no "
        "recurrent dropout); generic: use_cudnn=False.",
        "auto：条件允许时（有 GPU、默认激活函数、无循环 dropout）Keras 使用融合的 cuDNN 内核；"
        "generic：use_cudnn=False。",
    ),
    "control.device": _m("Device", "设备"),
    "control.device.help": _m(
        "auto: the first GPU if TensorFlow sees one, else the CPU.",
        "auto：TensorFlow 能看到 GPU 时用第一块 GPU，否则用 CPU。",
    ),
    "control.strategy": _m("Strategy", "分布策略"),
    "control.strategy.help": _m(
        "none: one device. mirrored: tf.distribute.MirroredStrategy, one replica per device "
        "named in Replicas (none named: every GPU, else every logical CPU device); the batch "
        "is split evenly across them. Several machines: the command line's worker.",
        "none：单设备。mirrored：tf.distribute.MirroredStrategy，“副本”中每个设备一个副本（未选时：所有 GPU，"
        "否则所有逻辑 CPU 设备）；批量在副本间平均分配。多台机器：用命令行的 worker。",
    ),
    "strategy.none": _m("none", "none"),
    "strategy.mirrored": _m("mirrored", "mirrored（镜像）"),
    "control.devices": _m("Replicas", "副本"),
    "control.devices.help": _m(
        "The devices of a mirrored run, one replica each. This server sees: {devices}. On a "
        "machine without GPUs, start the app with HIERLSTM_LOGICAL_CPUS=2 to split the CPU "
        "into two logical devices (they share the cores: a test of the strategy, not of GPU "
        "scaling).",
        "镜像运行所用的设备，每个设备一个副本。本服务器可见：{devices}。在没有 GPU 的机器上，用 "
        "HIERLSTM_LOGICAL_CPUS=2 启动应用可把 CPU 拆成两个逻辑设备（它们共用内核：用于检验策略，而非 GPU 扩展）。",
    ),
    "control.devices.placeholder": _m("every device", "所有设备"),
    "control.strategy.device_unused": _m(
        "Device {device} is not used under mirrored: the replicas are the devices.",
        "mirrored 策略下不使用设备 {device}：副本即设备。",
    ),
    "control.xla": _m("XLA", "XLA"),
    "control.xla.help": _m(
        "Compile the run with XLA (jit_compile=True). XLA compiles the whole step, and XLA "
        "cannot compile cuDNN's kernel, so under XLA every LSTM takes the generic kernel: on a "
        "GPU, XLA on and off compares XLA with the generic kernel against cuDNN without XLA.",
        "用 XLA 编译运行（jit_compile=True）。XLA 编译整个步骤，而 XLA 无法编译 cuDNN 的内核，所以开启 "
        "XLA 时每个 LSTM 都用通用内核：在 GPU 上，开关 XLA 比较的是“XLA + 通用内核”与“cuDNN、不用 "
        "XLA”。",
    ),
    "control.timing": _m("Timing", "计时"),
    "control.warmup": _m("Warm-up calls", "预热次数"),
    "control.warmup.help": _m(
        "Untimed calls after the first call.", "首次调用之后、不计时的调用次数。"
    ),
    "control.repeats": _m("Timed repeats", "计时次数"),
    "control.repeats.help": _m(
        "Timed calls (rounds, when variants are compared) per measurement.",
        "每次测量的计时调用次数（比较多个变体时为轮数）。",
    ),
    "control.geometry": _m("Advanced geometry", "高级几何参数"),
    "control.height": _m("Height", "高度"),
    "control.height.help": _m(
        "Rows of each spectrogram (frequency bins); 36 in the question.",
        "每个频谱图的行数（频率 bin）；问题中为 36。",
    ),
    "control.filters": _m("Filters", "滤波器数"),
    "control.filters.help": _m(
        "Conv2D output channels; 16 in the question.", "Conv2D 输出通道数；问题中为 16。"
    ),
    "control.kernel_size": _m("Kernel size", "卷积核大小"),
    "control.kernel_size.help": _m(
        "Conv2D kernel is k × k; 3 in the question.", "Conv2D 卷积核为 k × k；问题中为 3。"
    ),
    "control.pool_height": _m("Pool height", "池化高度"),
    "control.pool_height.help": _m(
        "MaxPooling over this many rows; rows left = height // pool height (12 in the question).",
        "在这么多行上做最大池化；剩余行数 = 高度 // 池化高度（问题中为 12）。",
    ),
    "control.inner_units": _m("Inner units", "内层单元数"),
    "control.inner_units.help": _m(
        "Units of the summarising LSTM; 48 in the question.", "摘要 LSTM 的单元数；问题中为 48。"
    ),
    "control.outer_units": _m("Outer units", "外层单元数"),
    "control.outer_units.help": _m(
        "Units of the outer LSTM; 60 in the question.", "外层 LSTM 的单元数；问题中为 60。"
    ),
    "control.invalid": _m(
        "These settings are not valid, the last valid ones are used: {reason}",
        "这些设置无效，沿用上一组有效设置：{reason}",
    ),
    "kernel.auto": _m("auto", "auto"),
    "kernel.generic": _m("generic", "generic（通用）"),
    "precision.slow.cpu": _m(
        "{precision} on a CPU is emulated and usually slower than float32.",
        "{precision} 在 CPU 上是模拟实现，通常比 float32 慢。",
    ),
    "precision.slow.gpu": _m(
        "{precision} may not be faster than float32 on this GPU (its compute capability is too "
        "low or unknown).",
        "在这块 GPU 上 {precision} 未必比 float32 快（计算能力不足或未知）。",
    ),
    # --- the server's warm-up ----------------------------------------------------------------
    "warmup.held": _m(
        "held until the file HIERLSTM_WARMUP_AFTER names exists",
        "等待 HIERLSTM_WARMUP_AFTER 指定的文件出现",
    ),
    "warmup.libraries": _m("importing numpy and pandas", "正在导入 numpy 和 pandas"),
    "warmup.tensorflow": _m("importing TensorFlow", "正在导入 TensorFlow"),
    "warmup.devices": _m("starting and listing the devices", "正在启动并列出设备"),
    "warmup.modules": _m("loading the pages' code", "正在加载页面代码"),
    "warmup.trace": _m("building and tracing the default models", "正在构建并追踪默认设置下的模型"),
    "warmup.trace_tabs": _m(
        "tracing the default page's other tabs", "正在追踪默认页面的其他标签页"
    ),
    "warmup.sharing": _m("checking the shared weights", "正在检查共享权重"),
    "warmup.calibrate": _m(
        "measuring this machine's cost per step for the estimate", "正在测量本机每步耗时以供估算"
    ),
    "warmup.waiting": _m(
        "This server started moments ago and is warming up ({what}, {seconds:.1f} s so far); "
        "the page fills in when it is ready.",
        "服务器刚启动，正在预热（{what}，已用 {seconds:.1f} 秒）；准备好后页面会自动补全。",
    ),
    "banner.starting": _m(
        "**Starting** · this server is importing TensorFlow; its version and the devices "
        "appear here when it is ready.",
        "**启动中** · 服务器正在导入 TensorFlow；准备好后这里会显示版本与设备。",
    ),
    "banner.warmup_failed": _m(
        "The server's warm-up failed (an error of ours, logged on the server): {error}",
        "服务器预热失败（是我们的错误，已记录在服务器日志中）：{error}",
    ),
    "control.devices.detecting": _m(
        "(The server is still detecting its devices.)", "（服务器仍在检测设备。）"
    ),
    # --- banner ----------------------------------------------------------------------------------
    "banner.line": _m(
        "**TensorFlow** {tensorflow} · **Keras** {keras} · **Device** {device} · **Strategy** "
        "{strategy} · **cuDNN** {cudnn}",
        "**TensorFlow** {tensorflow} · **Keras** {keras} · **设备** {device} · **分布策略** "
        "{strategy} · **cuDNN** {cudnn}",
    ),
    "banner.device.replicas": _m("one per replica (see Strategy)", "每个副本一个（见分布策略）"),
    "banner.strategy.none": _m("none (one device)", "无（单设备）"),
    "banner.strategy.mirrored": _m(
        "{label}: {replicas} replica(s) × {batch} sample(s) each",
        "{label}：{replicas} 个副本，每个 {batch} 个样本",
    ),
    "banner.strategy.invalid": _m(
        "{strategy}, cannot run: {error}", "{strategy}，无法运行：{error}"
    ),
    "banner.devices_failed": _m(
        "The logical CPU devices were not set up, so this server has one CPU device: {error}",
        "未能设置逻辑 CPU 设备，本服务器只有一个 CPU 设备：{error}",
    ),
    "banner.gpu_memory_failed": _m(
        "GPU memory was not set up, so TensorFlow may take nearly all of it at first use and "
        "starve other sessions and the CLI: {error}",
        "未能设置 GPU 内存，TensorFlow 首次使用时可能占用几乎全部显存，使其他会话和命令行无内存可用：{error}",
    ),
    "banner.cudnn.no_cuda": _m(
        "not available: this TensorFlow was built without CUDA, so every LSTM runs the generic "
        "kernel",
        "不可用：此 TensorFlow 构建时未带 CUDA，所以所有 LSTM 都运行通用内核",
    ),
    "banner.cudnn.no_gpu": _m(
        "not available: TensorFlow sees no GPU, so every LSTM runs the generic kernel",
        "不可用：TensorFlow 看不到 GPU，所以所有 LSTM 都运行通用内核",
    ),
    "banner.cudnn.yes": _m(
        "available (cuDNN {version}, {gpus} GPU(s)): Keras LSTM layers take it when eligible, "
        "except under XLA (XLA compiles the whole step, and XLA cannot compile cuDNN's kernel)",
        "可用（cuDNN {version}，{gpus} 块 GPU）：Keras LSTM 层在满足条件时使用它，开启 XLA 时除外"
        "（XLA 编译整个步骤，而 XLA 无法编译 cuDNN 的内核）",
    ),
    "banner.cudnn.unusable": _m(
        "not available: TensorFlow cannot use {subject} (see below)",
        "不可用：TensorFlow 无法使用{subject}（见下文）",
    ),
    "banner.gpu_problem": _m("{problem} Fix: {fix}", "{problem} 解决办法：{fix}"),
    # --- doctor: what stops TensorFlow from using a GPU, and the fix ---------------------------
    "doctor.subject.an": _m("an {name}", "一块 {name}"),
    "doctor.subject.a": _m("a {name}", "一块 {name}"),
    "doctor.subject.many": _m("{count} NVIDIA GPUs ({names})", "{count} 块 NVIDIA GPU（{names}）"),
    "doctor.cannot_use": _m(
        "{subject} is present but TensorFlow cannot use it: {reason}",
        "本机有{subject}，但 TensorFlow 无法使用：{reason}",
    ),
    "doctor.cannot_use.headline": _m(
        "{subject} is present but TensorFlow cannot use it (the banner above the page says why "
        "and how to fix it).",
        "本机有{subject}，但 TensorFlow 无法使用（页面上方的横幅说明了原因和解决办法）。",
    ),
    "doctor.cannot_use.headline.many": _m(
        "{subject} are present but TensorFlow cannot use them (the banner above the page says "
        "why and how to fix it).",
        "本机有{subject}，但 TensorFlow 无法使用（页面上方的横幅说明了原因和解决办法）。",
    ),
    "banner.gpu_more": _m("{count} more from doctor", "doctor 的另外 {count} 条说明"),
    "doctor.cannot_use.many": _m(
        "{subject} are present but TensorFlow cannot use them: {reason}",
        "本机有{subject}，但 TensorFlow 无法使用：{reason}",
    ),
    "doctor.reason.no_cuda_build": _m(
        "this TensorFlow {tensorflow} was built without CUDA.",
        "此 TensorFlow {tensorflow} 构建时未带 CUDA。",
    ),
    "doctor.fix.no_cuda_build": _m(
        "TensorFlow's GPU builds are for Linux (on Windows, inside WSL2); there, install "
        "{requirement} (make run GPU=1).",
        "TensorFlow 的 GPU 版本只支持 Linux（Windows 上需在 WSL2 中）；请在其中安装 {requirement}"
        "（make run GPU=1）。",
    ),
    "doctor.reason.hidden": _m(
        "CUDA_VISIBLE_DEVICES={value} hides every GPU from it.",
        "CUDA_VISIBLE_DEVICES={value} 使它看不到任何 GPU。",
    ),
    "doctor.fix.hidden": _m(
        "unset CUDA_VISIBLE_DEVICES, or set it to the GPUs to use (e.g. CUDA_VISIBLE_DEVICES=0).",
        "取消设置 CUDA_VISIBLE_DEVICES，或把它设为要使用的 GPU（如 CUDA_VISIBLE_DEVICES=0）。",
    ),
    "doctor.reason.old_driver": _m(
        "its NVIDIA driver {driver} is older than {minimum}, the oldest that runs CUDA "
        "{cuda_major}.x, and TensorFlow {tensorflow} was built with CUDA {cuda}.",
        "其 NVIDIA 驱动 {driver} 早于 {minimum}（运行 CUDA {cuda_major}.x 所需的最低版本），而 "
        "TensorFlow {tensorflow} 是用 CUDA {cuda} 构建的。",
    ),
    "doctor.fix.old_driver": _m(
        "upgrade the NVIDIA driver to {minimum} or newer (NVIDIA's CUDA compatibility table), "
        "then restart the app or the command.",
        "把 NVIDIA 驱动升级到 {minimum} 或更新版本（见 NVIDIA 的 CUDA 兼容性表），然后重启应用或命令。",
    ),
    "doctor.reason.missing_packages": _m(
        "the CUDA libraries of TensorFlow's and-cuda extra are not installed ({packages}).",
        "未安装 TensorFlow 的 and-cuda 附加依赖中的 CUDA 库（{packages}）。",
    ),
    "doctor.fix.missing_packages": _m(
        "install them with make run GPU=1 (or make test GPU=1), or {python} -m pip install "
        "'{requirement}', then restart the app or the command.",
        "用 make run GPU=1（或 make test GPU=1）安装，或运行 {python} -m pip install "
        "'{requirement}'，然后重启应用或命令。",
    ),
    "doctor.reason.no_libcuda": _m(
        "this process cannot load the NVIDIA driver's libcuda.so.1.",
        "此进程无法加载 NVIDIA 驱动的 libcuda.so.1。",
    ),
    "doctor.fix.no_libcuda": _m(
        "install the driver's user-space libraries, of the same version as its kernel module "
        "({driver}); in a container, start it with the GPU exposed (docker run --gpus all).",
        "安装与驱动内核模块（{driver}）同版本的用户态库；在容器中，请在启动时暴露 GPU"
        "（docker run --gpus all）。",
    ),
    "doctor.reason.unloadable": _m("it cannot load {libraries}.", "它无法加载 {libraries}。"),
    "doctor.fix.unloadable": _m(
        "reinstall the and-cuda wheels ({python} -m pip install --force-reinstall "
        "'{requirement}'), or put the system's CUDA {cuda} and cuDNN {cudnn} libraries on "
        "LD_LIBRARY_PATH.",
        "重新安装 and-cuda 的 wheel（{python} -m pip install --force-reinstall '{requirement}'），"
        "或把系统中 CUDA {cuda} 和 cuDNN {cudnn} 的库加入 LD_LIBRARY_PATH。",
    ),
    "doctor.reason.unknown": _m(
        "TensorFlow lists no GPU, and nothing checked here (driver {driver}, a CUDA {cuda} "
        "build, its libraries) explains why.",
        "TensorFlow 列不出任何 GPU，而这里检查的各项（驱动 {driver}、CUDA {cuda} 构建及其库）都解释不了原因。",
    ),
    "doctor.fix.unknown": _m(
        "read TensorFlow's own start-up messages: TF_CPP_MIN_LOG_LEVEL=0 {python} -c "
        "\"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\".",
        "查看 TensorFlow 自己的启动信息：TF_CPP_MIN_LOG_LEVEL=0 {python} -c "
        "\"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"。",
    ),
    "doctor.reason.capability": _m(
        "its compute capability {capability} is older than {minimum}, the oldest this "
        "TensorFlow has kernels for ({targets}), so TensorFlow ignores it.",
        "它的计算能力 {capability} 低于 {minimum}（此 TensorFlow 内核支持的最低版本，{targets}），"
        "因此 TensorFlow 会忽略它。",
    ),
    "doctor.fix.capability": _m(
        "use a GPU of compute capability {minimum} or newer, or a TensorFlow built from source "
        "for {capability}.",
        "使用计算能力 {minimum} 或更高的 GPU，或使用针对 {capability} 从源码构建的 TensorFlow。",
    ),
    "doctor.warning.ptx_jit": _m(
        "{subject} (compute capability {capability}) has no compiled TensorFlow kernels: "
        "TensorFlow {tensorflow} carries them for {binaries}, so CUDA compiles its PTX ({ptx}) "
        "for this GPU when it first runs, which TensorFlow warns can take 30 minutes or longer.",
        "{subject}（计算能力 {capability}）没有预编译的 TensorFlow 内核：TensorFlow {tensorflow} "
        "只带有 {binaries} 的内核，所以 CUDA 会在首次运行时为这块 GPU 编译其 PTX（{ptx}），"
        "TensorFlow 提示这可能需要 30 分钟或更久。",
    ),
    "doctor.fix.ptx_jit": _m(
        "let the first run finish once: CUDA keeps what it compiled in its cache (raise "
        "CUDA_CACHE_MAXSIZE, in bytes, if the cache is too small to keep it).",
        "让首次运行完整跑完一次：CUDA 会把编译结果保存在缓存中（若缓存太小放不下，调大 "
        "CUDA_CACHE_MAXSIZE，单位为字节）。",
    ),
    "doctor.warning.ptx_old_driver": _m(
        "{subject} needs that PTX compilation, and its driver {driver} is older than "
        "{toolkit_driver}, the driver of the CUDA {cuda} that produced the PTX: CUDA may refuse "
        'it ("the provided PTX was compiled with an unsupported toolchain").',
        "{subject} 需要编译这些 PTX，而它的驱动 {driver} 早于 {toolkit_driver}（生成这些 PTX 的 CUDA "
        "{cuda} 对应的驱动）：CUDA 可能拒绝编译（“the provided PTX was compiled with an unsupported "
        "toolchain”）。",
    ),
    "doctor.fix.ptx_old_driver": _m(
        "upgrade the NVIDIA driver to {toolkit_driver} or newer; doctor's probe on this GPU shows "
        "whether it works as it is.",
        "把 NVIDIA 驱动升级到 {toolkit_driver} 或更新版本；doctor 在这块 GPU 上的探测会显示当前能否运行。",
    ),
    "doctor.warning.smi_failed": _m(
        "nvidia-smi is installed but fails ({error}), so whether this machine has a usable "
        "NVIDIA GPU is unknown.",
        "nvidia-smi 已安装但运行失败（{error}），因此无法确定本机是否有可用的 NVIDIA GPU。",
    ),
    "doctor.fix.smi_failed": _m(
        "if it has one, load the NVIDIA kernel module (a reboot after a driver upgrade usually "
        "does) until nvidia-smi lists the GPU.",
        "如果有 GPU，请加载 NVIDIA 内核模块（驱动升级后重启通常即可），直到 nvidia-smi 能列出该 GPU。",
    ),
    # --- LSTM kernels ------------------------------------------------------------------------
    "kernel.col.variant": _m("variant", "变体"),
    "kernel.col.lstm": _m("LSTM", "LSTM"),
    "kernel.col.kind": _m("built as", "构建方式"),
    "kernel.col.ran": _m("kernel that ran", "实际运行的内核"),
    "kernel.col.why": _m("why", "原因"),
    "kernel.kind.layer": _m("keras.layers.LSTM", "keras.layers.LSTM"),
    "kernel.kind.cell": _m("RNN(LSTMCell) / custom cell", "RNN(LSTMCell) / 自定义单元"),
    "kernel.why.cell": _m(
        "an RNN around a bare cell never takes the cuDNN path",
        "包着裸单元的 RNN 永远不走 cuDNN 路径",
    ),
    "kernel.why.cudnn": _m("the fused cuDNN kernel ran", "运行的是融合的 cuDNN 内核"),
    "kernel.why.requested": _m(
        "use_cudnn=False: the generic kernel was asked for (or the run was pinned to the CPU)",
        "use_cudnn=False：要求使用通用内核（或运行被固定在 CPU 上）",
    ),
    "kernel.why.no_cuda": _m(
        "TensorFlow was built without CUDA: cuDNN needs a CUDA build",
        "TensorFlow 构建时未带 CUDA，而 cuDNN 需要 CUDA 版本",
    ),
    "kernel.why.no_gpu": _m(
        "no GPU visible to TensorFlow: cuDNN needs a GPU",
        "TensorFlow 看不到 GPU，而 cuDNN 需要 GPU",
    ),
    "kernel.why.xla": _m(
        "XLA compiles the whole step, and XLA cannot compile cuDNN's kernel: under XLA every "
        "LSTM is built with the generic kernel (use_cudnn=False)",
        "XLA 编译整个步骤，而 XLA 无法编译 cuDNN 的内核：开启 XLA 时每个 LSTM 都用通用内核构建"
        "（use_cudnn=False）",
    ),
    "kernel.why.other": _m(
        "Keras emitted no cuDNN op for this LSTM", "Keras 没有为这个 LSTM 生成 cuDNN 算子"
    ),
    # --- axes and shapes -----------------------------------------------------------------------
    "axis.batch": _m("batch", "批量"),
    "axis.time": _m("time", "时间"),
    "axis.height": _m("rows", "行"),
    "axis.channels": _m("channels", "通道"),
    "axis.units": _m("units", "单元"),
    "axis_name.time_steps": _m("time steps", "时间步数"),
    "axis_name.batch_size": _m("batch size", "批量大小"),
    "axis_name.replicas": _m("replicas", "副本数"),
    "scaling.replicas.weak": _m(
        "Weak scaling: each replica runs the sidebar's batch, so n replicas run n times the "
        "samples; the dashed lines are n × one replica's throughput.",
        "弱扩展：每个副本运行侧边栏中的批量，n 个副本处理 n 倍的样本；虚线为 n × 单副本吞吐量。",
    ),
    "scaling.replicas.cpu_note": _m(
        "These replicas are logical CPU devices sharing this machine's cores: the "
        "efficiency measures tf.distribute's overhead here and says nothing about how GPUs "
        "scale.",
        "这些副本是共用本机内核的逻辑 CPU "
        "设备：此处的效率反映 tf.distribute 的开销，不代表 GPU 的扩展情况。",
    ),
    "axis_title.time_steps": _m("time steps (count, log scale)", "时间步数（个，对数刻度）"),
    "axis_title.batch_size": _m(
        "batch size (spectrograms, log scale)", "批量大小（频谱图个数，对数刻度）"
    ),
    # --- shape trace -------------------------------------------------------------------------
    "trace.title": _m("What the model does to a tensor", "模型如何变换一个张量"),
    "trace.intro": _m(
        "A batch of spectrograms `(batch, 36 rows, time, 1)` goes in; for every time step the "
        "model summarises the 12 pooled rows with an inner LSTM(48), then runs an outer LSTM(60) "
        "over time. Below, every step a tensor takes, inside wrappers and cells too: the "
        "**symbolic** shape Keras infers (`None` = any size) beside the **concrete** shape at "
        "your sizes. Change sizes in the sidebar and press **Update trace**: nothing is timed.",
        "输入一批频谱图 `(batch, 36 行, time, 1)`；模型在每个时间步用内层 LSTM(48) 概括池化后的 12 "
        "行，再沿时间运行外层 LSTM(60)。下面列出张量经过的每一步（包括包装层和单元内部）：Keras "
        "推断的**符号**形状（`None` 表示任意大小）与按你的尺寸得到的**具体**形状并排显示。在侧边栏"
        "修改尺寸并点击**更新追踪**：不会进行任何计时。",
    ),
    "trace.metric.params": _m("Parameters", "参数量"),
    "trace.metric.flops": _m("FLOPs per pass", "每次前向的 FLOPs"),
    "trace.metric.flops.help": _m(
        "Analytic: a multiply-add counts 2; the same for every variant (same function).",
        "解析计算：一次乘加算 2；所有变体相同（同一个函数）。",
    ),
    "trace.metric.chain": _m("Dependent LSTM steps", "依赖链长度（LSTM 步）"),
    "trace.metric.chain.help": _m(
        "The longest chain of LSTM steps that must run one after another: what a GPU cannot "
        "parallelise.",
        "必须一个接一个执行的最长 LSTM 步链：GPU 无法并行的部分。",
    ),
    "trace.metric.memory": _m("Activations", "激活内存"),
    "trace.metric.memory.help": _m(
        "Bytes of every layer output of one pass at this precision (an upper bound).",
        "该精度下一次前向中所有层输出的字节数（上界）。",
    ),
    "trace.timing": _m(
        "Traced in {ms:.0f} ms (cached after the first time; no timing run).",
        "追踪耗时 {ms:.0f} 毫秒（首次之后走缓存；没有运行计时）。",
    ),
    "trace.replicas": _m(
        "Under the strategy, each of the {replicas} replicas runs its share of the global "
        "batch: the shapes, FLOPs and bytes below are one replica's ({batch} / {replicas} = "
        "{per} samples).",
        "在分布策略下，{replicas} 个副本各自运行全局批量的一部分：下面的形状、FLOPs 和字节数都是单个副本的"
        "（{batch} / {replicas} = {per} 个样本）。",
    ),
    "trace.static_too_long": _m(
        "{variant} is built for one time length and traces one inner LSTM per step; tracing "
        "{time} steps would take an estimated {seconds:,.0f} s. Use {limit} time steps or fewer "
        "for it, or folded, which computes the same function with one call.",
        "{variant} 按固定时间长度构建，每一步追踪一个内层 LSTM；追踪 {time} 步估计需要 {seconds:,.0f} 秒。"
        "请对它使用不超过 {limit} 的时间步数，或改用 folded（用一次调用计算同一个函数）。",
    ),
    "trace.source": _m("Source of {variant}, as it runs", "{variant} 的源码（正在运行的代码）"),
    "trace.source.caption": _m(
        "Read from the running code with inspect.getsource: the builder and the hierlstm "
        "functions and layers it uses.",
        "用 inspect.getsource 从正在运行的代码中读取：构建函数及其用到的 hierlstm 函数和层。",
    ),
    "trace.col.step": _m("step", "步骤"),
    "trace.col.layer": _m("layer", "层"),
    "trace.col.symbolic": _m("symbolic shape", "符号形状"),
    "trace.col.concrete": _m("concrete shape", "具体形状"),
    "trace.col.axes": _m("axes", "轴"),
    "trace.col.calls": _m("calls per pass", "每次前向调用次数"),
    "trace.col.params": _m("params", "参数"),
    "trace.col.mflops": _m("MFLOPs", "MFLOPs"),
    "trace.col.kib": _m("output KiB", "输出 KiB"),
    "trace.col.note": _m("what happens", "发生了什么"),
    # --- trace notes: note.<path> or note.<variant>/<path> (hierlstm.model.trace_notes) ---------
    "note.input": _m(*_NOTE_INPUT),
    "note.input.replicas": _m(
        "The global batch of {global_batch} is split over {replicas} replicas; each runs the "
        "steps below on its {batch}. " + _NOTE_INPUT[0],
        "全局批量 {global_batch} 被分到 {replicas} 个副本上；每个副本在自己的 {batch} 个样本上运行下面的各步。"
        + _NOTE_INPUT[1],
    ),
    "note.conv": _m(
        "{kernel}x{kernel} convolution, 'same' padding, {filters} filters: height and time are "
        "kept, channels go from 1 to {filters}.",
        "{kernel}x{kernel} 卷积，'same' 填充，{filters} 个滤波器：高度和时间不变，通道数从 1 变为 "
        "{filters}。",
    ),
    "note.pool": _m(
        "Max over every {pool} rows: height {height} -> {rows}, time untouched.",
        "每 {pool} 行取最大值：高度 {height} -> {rows}，时间不变。",
    ),
    "note.permute": _m(
        "Swaps height and time: each of the {time} time steps now holds a {rows}-row "
        "sub-sequence of {filters} channels.",
        "交换高度与时间轴：{time} 个时间步中的每一步现在都是一个 {rows} 行、{filters} 通道的子序列。",
    ),
    "note.fold": _m(
        "Folds batch and time into one axis: {batch} x {time} = {folded} independent "
        "sub-sequences of {rows} rows.",
        "把批量和时间折叠成一个轴：{batch} x {time} = {folded} 条相互独立的 {rows} 行子序列。",
    ),
    "note.inner_lstm": _m(
        "One LSTM call over all {folded} sub-sequences ({rows} steps each), keeping the last "
        "hidden state.",
        "一次 LSTM 调用处理全部 {folded} 条子序列（每条 {rows} 步），保留最后的隐藏状态。",
    ),
    "note.inner_rnn": _m(
        "RNN(LSTMCell) over all {folded} sub-sequences ({rows} steps each): same maths as LSTM, "
        "never the cuDNN kernel.",
        "RNN(LSTMCell) 处理全部 {folded} 条子序列（每条 {rows} 步）：与 LSTM 数学相同，但永远不走 "
        "cuDNN 内核。",
    ),
    "note.inner_rnn/inner_cell": _m(
        "The bare LSTMCell, one step on (batch*time, {filters}): the object that weight sharing "
        "hands to several RNN layers; RNN loops it over the rows.",
        "裸 LSTMCell，在 (batch*time, {filters}) 上走一步：权重共享时交给多个 RNN 层的正是这个对象；"
        "RNN 沿行循环调用它。",
    ),
    "note.unfold": _m(
        "Splits the folded axis back into batch {batch} and time {time}.",
        "把折叠轴拆回批量 {batch} 和时间 {time}。",
    ),
    "note.outer_lstm": _m(
        "The outer LSTM runs over the {time} time steps, returning every step.",
        "外层 LSTM 沿 {time} 个时间步运行，返回每一步的输出。",
    ),
    "note.nested_rnn": _m(
        "RNN over {time} time steps whose cell runs a whole {rows}-step inner LSTM per step: a "
        "chain of {time} x {rows} + {time} = {chain} sequential steps.",
        "沿 {time} 个时间步的 RNN，其单元在每一步都运行完整的 {rows} 步内层 LSTM：依赖链长 {time} x "
        "{rows} + {time} = {chain} 个顺序步。",
    ),
    "note.nested_rnn/nested_cell/inner_lstm": _m(
        "Inside each of the {time} outer steps: a full {rows}-step LSTM over that step's rows, "
        "keeping the last hidden state.",
        "在 {time} 个外层步的每一步内部：对该步的行运行完整的 {rows} 步 LSTM，保留最后的隐藏状态。",
    ),
    "note.nested_rnn/nested_cell/outer_cell": _m(
        "Then one step of the outer LSTMCell on that summary; its state [h, c] is the RNN's "
        "state carried to the next time step.",
        "然后在该摘要上执行外层 LSTMCell 的一步；它的状态 [h, c] 就是传到下一时间步的 RNN 状态。",
    ),
    "note.time_distributed/summarise": _m(
        "Keras 3 TimeDistributed with a known time length: calls the inner LSTM once per time "
        "step, {time} calls traced into the graph, so tracing grows with time_steps.",
        "Keras 3 中已知时间长度的 TimeDistributed：每个时间步调用一次内层 LSTM，图中追踪了 {time} "
        "次调用，因此追踪时间随时间步数增长。",
    ),
    "note.time_distributed/summarise/inner_lstm": _m(
        "The wrapped LSTM, called {time} times (once per time step) on (batch, {rows}, "
        "{filters}); each call is its own {rows}-step loop.",
        "被包装的 LSTM，调用 {time} 次（每个时间步一次），输入 (batch, {rows}, {filters})；每次调用"
        "都是自己的 {rows} 步循环。",
    ),
    "note.vectorized_map/summarise": _m(
        "tf.vectorized_map over the {time} time steps: pfor rewrites the per-step inner LSTM "
        "into one program for all steps.",
        "沿 {time} 个时间步的 tf.vectorized_map：pfor 把单步的内层 LSTM 改写成覆盖所有步的一个程序。",
    ),
    "note.vectorized_map/summarise/inner_lstm": _m(
        "The per-time-step program vectorized_map starts from: the inner LSTM on one step "
        "(batch, {rows}, {filters}); pfor runs it for all {time} steps at once.",
        "vectorized_map 的出发点：单个时间步上的内层 LSTM，输入 (batch, {rows}, {filters})；pfor "
        "让它同时运行全部 {time} 步。",
    ),
    "note.fused_lstm": _m(
        "The whole model in one layer of plain TensorFlow ops; its steps, shown below, keep the "
        "data time-major so no step needs a transpose.",
        "整个模型是一层普通的 TensorFlow 算子；下面列出的各步都让数据保持时间优先，所以没有哪一步需要转置。",
    ),
    "note.fused_lstm/pooled_rows": _m(
        "Conv, bias and max-pool written out, stored rows-first: {rows} rows x {time} time x "
        "{batch} batch, so each inner step reads one contiguous slab.",
        "直接写出的卷积、偏置和最大池化，按行优先存放：{rows} 行 × {time} 个时间步 × {batch} 个批量，"
        "所以每个内层步读取一块连续内存。",
    ),
    "note.fused_lstm/inner_lstm": _m(
        "{rows} unrolled LSTM steps over all {folded} sub-sequences at once (one matmul each); "
        "the last hidden state, already time-major.",
        "在全部 {folded} 条子序列上一次展开的 {rows} 步 LSTM（每步一次矩阵乘法）；最后的隐藏状态已经是"
        "时间优先。",
    ),
    "note.fused_lstm/outer_lstm": _m(
        "A while-loop over the {time} time steps carrying (h, c); transposed to (batch, time, "
        "units) at the end.",
        "沿 {time} 个时间步的 while 循环，携带 (h, c)；最后转置为 (batch, time, units)。",
    ),
    # --- variants (hierlstm.registry names them; their words are here) -------------------------------
    "variant.nested.title": _m("Nested cell (the question)", "嵌套单元（提问者的设计）"),
    "variant.nested.explanation": _m(
        "The asker's design: an RNN over time whose custom cell runs the whole inner LSTM "
        "over the 12-row sub-sequence and then one step of the outer LSTMCell. Every outer "
        "step waits for a complete inner loop, so the dependent chain is time x rows + time "
        "steps long, and a custom cell can never use cuDNN.",
        "提问者的设计：沿时间的 RNN，其自定义单元先在 12 行子序列上运行完整的内层 LSTM，再执行外层 "
        "LSTMCell 的一步。每个外层步都要等一个完整的内层循环，所以依赖链长 time × rows + time 步，"
        "而且自定义单元永远无法使用 cuDNN。",
    ),
    "variant.time_distributed.title": _m(
        "TimeDistributed(LSTM) (the answer)", "TimeDistributed(LSTM)（回答的方案）"
    ),
    "variant.time_distributed.explanation": _m(
        "The answer's fix: TimeDistributed(LSTM(48)) then LSTM(60). Keras 3 does not fold "
        "batch and time: with a known time length it calls the inner LSTM once per time step, "
        "so the graph holds T inner loops and tracing grows with T; with an unknown length "
        "its vectorized_map path is broken (see Pitfalls), so this variant is built for the "
        "concrete length.",
        "回答给出的修改：TimeDistributed(LSTM(48)) 再接 LSTM(60)。Keras 3 不会把批量和时间折叠："
        "时间长度已知时，它对每个时间步调用一次内层 LSTM，图里有 T 个内层循环，追踪时间随 T 增长；"
        "长度未知时它的 vectorized_map 路径有缺陷（见“课程”页），所以这个变体按具体长度构建。",
    ),
    "variant.folded.title": _m("Folded batch x time", "折叠批量 × 时间"),
    "variant.folded.explanation": _m(
        "Reshape (B, T, 12, 16) to (B*T, 12, 16), run one LSTM(48) over all B*T sub-sequences "
        "at once, reshape back to (B, T, 48), then LSTM(60). Two plain LSTM calls, each "
        "eligible for cuDNN; the dependent chain is rows + time.",
        "把 (B, T, 12, 16) 重塑为 (B*T, 12, 16)，一次 LSTM(48) 处理全部 B*T 条子序列，再重塑回 "
        "(B, T, 48)，然后接 LSTM(60)。两次普通的 LSTM 调用，都可以走 cuDNN；依赖链长 rows + time。",
    ),
    "variant.vectorized_map.title": _m("tf.vectorized_map over time", "沿时间的 tf.vectorized_map"),
    "variant.vectorized_map.explanation": _m(
        "The answer's custom-loop advice: write the inner LSTM for one time step and let "
        "tf.vectorized_map (pfor) vectorise it over the time axis. pfor rewrites the inner "
        "loop's ops for all steps at once; ops it cannot convert (such as cuDNN's) fall back "
        "to a sequential while-loop.",
        "回答中关于自定义循环的建议：为单个时间步写内层 LSTM，让 tf.vectorized_map（pfor）沿时间轴"
        "向量化。pfor 把内层循环的算子一次性改写为覆盖所有步的版本；无法转换的算子（如 cuDNN 的）会"
        "退回到顺序的 while 循环。",
    ),
    "variant.shared_cell.title": _m("RNN(LSTMCell) summariser", "RNN(LSTMCell) 摘要器"),
    "variant.shared_cell.explanation": _m(
        "The answer's weight-sharing recipe used as the summariser: one LSTMCell inside an "
        "RNN layer over the folded sub-sequences. Same maths and chain as folded, but "
        "RNN(LSTMCell) never takes the cuDNN path: sharing weights this way silently gives up "
        "the fused kernel (calling one LSTM layer twice keeps it).",
        "把回答的权重共享方案用作摘要器：在折叠后的子序列上，把一个 LSTMCell 放进 RNN 层。数学和依赖"
        "链与 folded 相同，但 RNN(LSTMCell) 永远不走 cuDNN：这样共享权重会悄悄放弃融合内核（对同一个 "
        "LSTM 层调用两次则能保留）。",
    ),
    "variant.fused.title": _m("Fused, shaped for the CPU", "融合实现（为 CPU 设计）"),
    "variant.fused.explanation": _m(
        "The whole model written out in TensorFlow ops for XLA on a CPU. Batch and time are "
        "folded time-major, so the inner LSTM is 12 unrolled steps over all B*T "
        "sub-sequences, each one [x, h] @ [W; U] matmul (no hoisted input projection: at "
        "large B*T that tensor is hundreds of MB, and a CPU is memory-bound), and the outer "
        "LSTM is a while-loop doing one [s, h] @ [W; U] matmul per time step. Every sigmoid "
        "is 0.5 + 0.5 tanh(z/2) with the halving folded into the weights, and under XLA the "
        "3x3 conv and max-pool are one fused loop of shifted multiply-adds (XLA's CPU "
        "convolution is slow here). Same parameters and outputs as the others; on a 2-core "
        "CPU about 1.3-1.6x faster than folded under XLA and 2x faster than folded without "
        "it.",
        "整个模型直接用 TensorFlow 算子写成，面向 CPU 上的 XLA。批量和时间按时间优先折叠，因此内层 "
        "LSTM 是在全部 B*T 条子序列上展开的 12 步，每步一次 [x, h] @ [W; U] 矩阵乘法（不预先计算输入投影："
        "B*T 很大时那个张量有数百 MB，而 CPU 受内存带宽限制）；外层 LSTM 是一个 while 循环，每个时间步一次 "
        "[s, h] @ [W; U] 矩阵乘法。每个 sigmoid 都写成 0.5 + 0.5 tanh(z/2)，减半折进权重；在 XLA 下 3x3 "
        "卷积和最大池化合成一个移位乘加的融合循环（XLA 在 CPU 上的卷积在这里很慢）。参数和输出与其他变体"
        "相同。",
    ),
    # --- benchmark -----------------------------------------------------------------------------
    "bench.title": _m("Which variant is fastest here?", "在这台机器上哪个变体最快？"),
    "bench.intro": _m(
        "The selected variants are built from one set of parameters and timed **in interleaved "
        "rounds** (A B, A B, …), so background load hits them alike. The first call (tracing) "
        "is reported apart, warm-up calls are not timed, each sample waits for the device, and "
        "speed-ups are medians of per-round ratios. Every run is stored (see Results).",
        "所选变体用同一组参数构建，并**交替轮流计时**（A B、A B……），后台负载对它们的影响相同。首次"
        "调用（追踪）单独报告，预热调用不计时，每个样本都等待设备完成，加速比是每轮比值的中位数。每次"
        "运行都会被保存（见“结果”页）。",
    ),
    "bench.breakdown_variant": _m("Per-layer breakdown of", "逐层耗时分解的变体"),
    "bench.breakdown_variant.help": _m(
        "One variant's top-level layers, each timed on its real input.",
        "一个变体的顶层各层，分别在其真实输入上计时。",
    ),
    "bench.press_run": _m(
        "Press **Run benchmark** in the sidebar to time {variants} at batch {batch} × {time} "
        "time steps ({warmup} warm-up calls, {repeats} timed rounds). On a 2-core CPU this "
        "takes a few seconds.",
        "点击侧边栏中的**运行基准测试**，在批量 {batch} × {time} 个时间步下为 {variants} 计时（预热 "
        "{warmup} 次，计时 {repeats} 轮）。在双核 CPU 上需要几秒钟。",
    ),
    "bench.stale": _m(
        "The settings have changed since this run; press the sidebar button to measure them.",
        "自这次运行以来设置已更改；点击侧边栏按钮以测量新的设置。",
    ),
    "bench.failed": _m("{variant} failed: {error}", "{variant} 运行失败：{error}"),
    "bench.summary.fastest": _m(
        "On {device}, at batch {batch} × {time} time steps, **{variant}** is fastest: "
        "{ms:.3g} ms per forward pass.",
        "在 {device} 上，批量 {batch} × {time} 个时间步时，**{variant}** 最快：每次前向 {ms:.3g} 毫秒。",
    ),
    "bench.summary.fastest.training": _m(
        "On {device}, at batch {batch} × {time} time steps, **{variant}** trains fastest: "
        "{ms:.3g} ms per training step.",
        "在 {device} 上，批量 {batch} × {time} 个时间步时，**{variant}** 训练最快：每个训练步 {ms:.3g} 毫秒。",
    ),
    "bench.summary.speedup": _m(
        "It is **{speedup:.2g}× faster than {baseline}** (median of paired rounds; p10–p90 "
        "{low:.2g}–{high:.2g}×).",
        "它**比 {baseline} 快 {speedup:.2g} 倍**（配对轮次比值的中位数；p10–p90 为 "
        "{low:.2g}–{high:.2g} 倍）。",
    ),
    "bench.summary.chain": _m(
        "Why: the dependent chain of LSTM steps is {chains}.",
        "原因：LSTM 步的依赖链长度为 {chains}。",
    ),
    "bench.noisy": _m(
        "Noisy timings (interquartile range over 10% of the median): {noisy}. Other work is "
        "running on this machine; more repeats help.",
        "计时噪声较大（四分位距超过中位数的 10%）：{noisy}。本机有其他任务在运行；增加计时次数会有帮助。",
    ),
    "bench.layers.caption": _m(
        "The whole model takes {model:.3g} ms. Each layer runs as its own function here, so "
        "each pays a call overhead of about {overhead:.2g} ms and the layers add up to more "
        "than the whole model.",
        "整个模型耗时 {model:.3g} 毫秒。这里每一层都作为单独的函数运行，每次调用约有 {overhead:.2g} "
        "毫秒的开销，所以各层之和大于整个模型。",
    ),
    "bench.layers.failed": _m(
        "The per-layer breakdown failed: {error}", "逐层耗时分解失败：{error}"
    ),
    "bench.training": _m(
        "A training step ({optimizer}): forward with training=True, the loss (mean squared "
        "error to a fixed random target), the gradients of every parameter through both "
        "recurrences, the update. Each phase is its own compiled function, timed in the same "
        "interleaved rounds as the whole step; the first call, which traces the gradient graph "
        "too, is reported apart. The per-layer split below times the forward pass.",
        "训练步（{optimizer}）：training=True 的前向、损失（与固定随机目标的均方误差）、穿过两层循环求出每个"
        "参数的梯度、更新。每个阶段是单独编译的函数，与整步在相同的交错轮次中计时；首次调用（同时追踪梯度图）"
        "单独报告。下方的逐层分解计时的是前向传播。",
    ),
    "bench.training.sum": _m(
        "Phases' sum against the whole step: {ratios}.", "各阶段之和与整步之比：{ratios}。"
    ),
    "bench.kernels": _m("The LSTM kernel that ran, per LSTM", "每个 LSTM 实际运行的内核"),
    "bench.table": _m("Every measured field", "所有测量字段"),
    "bench.download": _m("Download this run (CSV)", "下载本次运行（CSV）"),
    "bench.stored": _m("{count} result(s) stored in {path}.", "已保存 {count} 条结果到 {path}。"),
    # --- profile ------------------------------------------------------------------------------
    "profile.title": _m("Where the time goes inside the graph", "时间花在图中的哪里"),
    "profile.intro": _m(
        "Each selected variant runs under the **TensorFlow Profiler** for a number of steps "
        "(after its warm-up calls, each step marked). Every op's **self time** (its duration "
        "less the ops nested in it) is assigned to the layer whose name scope it ran in: this is "
        "what ran, inside while-loop bodies and XLA clusters, on every thread and stream. Beside "
        "it, the Benchmark page's **separate-call split** times each layer as its own function "
        "and pays one call's overhead per layer. Each profile is stored (see Results), and its "
        "capture is a download that TensorBoard's Profile tab opens.",
        "所选的每个变体在 **TensorFlow Profiler** 下运行若干步（先预热，每步都有标记）。每个算子的"
        "**自身时间**（其耗时减去嵌套在其中的算子）按其所在层的名称作用域归到该层：这就是实际运行的"
        "内容，包括 while 循环体与 XLA 簇内部、每个线程与流上的算子。旁边是基准测试页的**逐层单独"
        "调用拆分**：每层作为单独的函数计时，每层都要付出一次调用开销。每次剖析都会保存（见结果页），"
        "其采集文件可下载，并可用 TensorBoard 的 Profile 标签页打开。",
    ),
    "profile.steps": _m("Profiled steps", "剖析步数"),
    "profile.steps.help": _m(
        "How many marked steps the profiler records per variant (after the warm-up calls); "
        "every figure is per step.",
        "每个变体由剖析器记录多少个带标记的步（在预热调用之后）；所有数字都是每步的值。",
    ),
    "profile.press_run": _m(
        "Press **Profile** in the sidebar to record {steps} steps of {variants} at batch "
        "{batch} x time {time} under the TensorFlow Profiler.",
        "点击侧边栏的**开始剖析**，在 TensorFlow Profiler 下记录 {variants} 在批大小 {batch}、"
        "时间步 {time} 下的 {steps} 步。",
    ),
    "profile.failed": _m("{variant} could not be profiled: {error}", "{variant} 无法剖析：{error}"),
    "profile.metric.step": _m("{variant}: step under the profiler", "{variant}：剖析下的每步耗时"),
    "profile.metric.harness": _m(
        "{ms:.3g} ms by the harness, profiler off", "计时器（剖析关闭）测得 {ms:.3g} ms"
    ),
    "profile.metric.step.help": _m(
        "The median of the {steps} marked steps as the profiler saw them; below it, the median "
        "of {repeats} calls timed by the benchmark harness right after, on the same built "
        "model with the profiler off. The difference is what profiling itself costs.",
        "剖析器看到的 {steps} 个带标记步的中位数；下方是紧接着在同一个已构建模型上、关闭剖析器后"
        "由基准计时器测得的 {repeats} 次调用的中位数。两者之差就是剖析本身的开销。",
    ),
    "profile.method.profiler": _m("profiler", "剖析器"),
    "profile.method.separate": _m("separate calls", "逐层单独调用"),
    "profile.outside": _m("outside any layer", "不属于任何层"),
    "profile.chart.title": _m(
        "Each layer's share of a step: the profiler's split beside the separate-call split",
        "每层在一步中所占比例：剖析器拆分与逐层单独调用拆分对比",
    ),
    "profile.chart.x": _m("share of the variant's time (%)", "占该变体时间的比例（%）"),
    "profile.chart.y": _m("variant · how it was measured", "变体 · 测量方式"),
    "profile.layers.caption": _m(
        "Shares, not milliseconds (hover for those): the profiler slows what it records, and a "
        "separate call pays its own dispatch. *Outside any layer* is op time with no layer in "
        "its scope: the loss, the optimizer's update, copies, a compiled function's own call.",
        "比较的是比例而不是毫秒（悬停可看毫秒）：剖析器会拖慢它记录的运行，单独调用又要付出自己的调度"
        "开销。*不属于任何层* 是作用域中没有层名的算子时间：损失、优化器更新、拷贝、编译函数自身的调用。",
    ),
    "profile.summary": _m(
        "Op time **{op:.3g} ms** per step ({share:.0%} of the profiled step; the rest is "
        "TensorFlow's own dispatch and scheduling between ops), of which {outside:.3g} ms "
        "outside any layer; on {device}. Op time is summed over every thread and stream, so it "
        "is not wall time.",
        "每步算子时间 **{op:.3g} ms**（占剖析步的 {share:.0%}；其余是 TensorFlow 在算子之间的调度"
        "开销），其中 {outside:.3g} ms 不属于任何层；设备 {device}。算子时间是所有线程与流之和，"
        "并不是墙钟时间。",
    ),
    "profile.ops": _m("Top op types", "耗时最多的算子类型"),
    "profile.lines": _m("Threads and streams", "线程与流"),
    "profile.kernels": _m("Kernels that ran on a device", "在设备上运行的内核"),
    "profile.kernels.none": _m(
        "Nothing ran on a GPU: this capture has CPU threads only. On a GPU, every CUDA kernel "
        "that ran (cuDNN's among them, by their CUDA names) is listed here with its op and "
        "layer.",
        "没有任何内容在 GPU 上运行：此采集只有 CPU 线程。在 GPU 上，这里会列出每个运行过的 CUDA 内核"
        "（包括 cuDNN 的，按 CUDA 名称），以及其算子与层。",
    ),
    "profile.download": _m(
        "Download {variant}'s capture (.zip, for TensorBoard)",
        "下载 {variant} 的采集（.zip，供 TensorBoard 使用）",
    ),
    "profile.open": _m(
        "Unzip it and open it with `tensorboard --logdir DIR` (the Profile tab) or `xprof "
        "server --logdir DIR`; on this server it is in {logdir}.",
        "解压后用 `tensorboard --logdir DIR`（Profile 标签页）或 `xprof server --logdir DIR` "
        "打开；在本服务器上它位于 {logdir}。",
    ),
    "profile.stored": _m(
        "{count} profile(s) stored in {path}.", "已保存 {count} 次剖析到 {path}。"
    ),
    # --- scaling ------------------------------------------------------------------------------
    "scaling.title": _m("How the variants scale", "各变体如何随规模变化"),
    "scaling.intro": _m(
        "Each variant is timed at every value of one size. On log-log axes a slope of 1 means "
        "time grows in proportion; where two curves cross, the faster variant changes. Sweep "
        "over **replicas** to run each variant on 1, 2, … devices with tf.distribute's "
        "MirroredStrategy, each replica keeping the sidebar's batch.",
        "在某个尺寸的每个取值上为每个变体计时。在双对数坐标中斜率为 1 表示时间按比例增长；两条曲线"
        "相交处，更快的变体发生变化。选择按**副本数**扫描，则用 tf.distribute 的 MirroredStrategy "
        "在 1、2…… 个设备上运行每个变体，每个副本保持侧边栏中的批量。",
    ),
    "scaling.axis": _m("Sweep over", "扫描"),
    "scaling.values": _m("Values", "取值"),
    "scaling.values.help": _m(
        "2 to 12 whole numbers, separated by commas or spaces.",
        "2 到 12 个整数，用逗号或空格分隔。",
    ),
    "scaling.values.bad": _m(
        "Values must be 2 to 12 different whole numbers between {low} and {high}.",
        "取值必须是 2 到 12 个不同的整数，范围 {low} 到 {high}。",
    ),
    "scaling.press_run": _m(
        "Press **Run sweep** in the sidebar to time {variants} over {axis} = {values}.",
        "点击侧边栏中的**运行扫描**，在 {axis} = {values} 上为 {variants} 计时。",
    ),
    "scaling.replicas.training": _m(
        "The replica sweep times forward passes under tf.distribute; a training step runs on "
        "one device here. Set Measure to forward pass to sweep replicas.",
        "副本扫描在 tf.distribute 下计时前向传播；这里的训练步只在单个设备上运行。要扫描副本，请把“测量”"
        "设为前向传播。",
    ),
    "scaling.failed": _m(
        "{variant} at {value} failed: {error}", "{variant} 在 {value} 处运行失败：{error}"
    ),
    "scaling.no_crossover": _m(
        "No crossover in this range: the order of the variants is the same at every value.",
        "该范围内没有交叉点：各变体的快慢顺序在每个取值上都相同。",
    ),
    "scaling.crossover": _m(
        "Crossover: {first} is faster below {axis} ≈ {value:.3g}, {second} above.",
        "交叉点：{axis} ≈ {value:.3g} 以下 {first} 更快，以上 {second} 更快。",
    ),
    "scaling.fit.caption.time_steps": _m(
        "Least-squares fit of median time = fixed cost + slope × time steps: the slope is what "
        "one more time step costs.",
        "对“中位时间 = 固定开销 + 斜率 × 时间步数”做最小二乘拟合：斜率就是多一个时间步的代价。",
    ),
    "scaling.fit.caption.batch_size": _m(
        "Least-squares fit of median time = fixed cost + slope × batch size: the slope is what "
        "one more spectrogram costs.",
        "对“中位时间 = 固定开销 + 斜率 × 批量大小”做最小二乘拟合：斜率就是多一个频谱图的代价。",
    ),
    "scaling.chain.title": _m("The dependent chain", "依赖链"),
    "scaling.chain.intro": _m(
        "How many LSTM steps must run one after another, whatever the hardware: nested needs "
        "time × rows + time, the others rows + time. Computed, not measured.",
        "无论硬件如何，必须依次执行的 LSTM 步数：nested 需要 time × rows + time，其他变体需要 "
        "rows + time。这是计算值，不是测量值。",
    ),
    # --- weight sharing -------------------------------------------------------------------------
    "sharing.title": _m("Sharing LSTM weights, two ways", "两种共享 LSTM 权重的方式"),
    "sharing.intro": _m(
        "The answer shares weights by handing **one `LSTMCell` to two `RNN` layers**. Calling "
        "**one `LSTM` layer on two inputs** shares them too. Below, both are built and checked "
        "live on this machine: the same variable objects, independent states, and gradients "
        "from both paths landing in one variable.",
        "回答的做法是**把一个 `LSTMCell` 交给两个 `RNN` 层**来共享权重。**对同一个 `LSTM` 层调用两次**"
        "同样能共享。下面在这台机器上现场构建并检查两种方式：同一组变量对象、相互独立的状态，以及来自"
        "两条路径的梯度汇入同一个变量。",
    ),
    "sharing.source": _m("Both forms, as built here", "两种形式（此处的构建代码）"),
    "sharing.computing": _m("Building both forms and checking them…", "正在构建并检查两种形式…"),
    "sharing.checks": _m(
        "Live checks on {sequences} sequences of {rows} steps × {features} features, {units} units",
        "现场检查：{sequences} 条序列，每条 {rows} 步 × {features} 个特征，{units} 个单元",
    ),
    "sharing.col.check": _m("check", "检查项"),
    "sharing.check.same": _m(
        "both paths use the very same variable objects", "两条路径使用完全相同的变量对象"
    ),
    "sharing.check.params": _m("parameters (shared ones counted once)", "参数量（共享的只计一次）"),
    "sharing.check.different": _m(
        "different inputs → different outputs (max |a − b|)", "不同输入 → 不同输出（max |a − b|）"
    ),
    "sharing.check.equal": _m(
        "equal inputs → equal outputs (max |a − b|)", "相同输入 → 相同输出（max |a − b|）"
    ),
    "sharing.check.leak": _m(
        "path b's output when path a gets another input (max change): states are independent",
        "路径 a 换一个输入时路径 b 输出的最大变化：状态相互独立",
    ),
    "sharing.check.gradients": _m(
        "gradient of both paths = sum of each path's (tf.GradientTape)",
        "两条路径的总梯度 = 各路径梯度之和（tf.GradientTape）",
    ),
    "sharing.form.shared_cell": _m(
        "one LSTMCell in two RNNs (the answer)", "一个 LSTMCell 放进两个 RNN（回答的做法）"
    ),
    "sharing.form.shared_layer": _m("one LSTM called twice", "一个 LSTM 调用两次"),
    "sharing.value.params": _m(
        "{count:,} (two separate LSTMs: {unshared:,})", "{count:,}（两个独立 LSTM：{unshared:,}）"
    ),
    "sharing.value.gradients": _m("relative difference {error:.1e}", "相对差异 {error:.1e}"),
    "sharing.checks.caption": _m(
        "Computed live with this machine's TensorFlow; no weights are changed. Below, each bar "
        "is the L2 norm of one gradient from one tf.GradientTape: both paths send a non-zero "
        "gradient into the same variable, and the gradient of both together is their sum "
        "(checked element by element above), so its norm is at most the two norms added.",
        "用本机的 TensorFlow 现场计算；不会修改任何权重。下面每根柱子是同一个 tf.GradientTape 给出的"
        "某个梯度的 L2 范数：两条路径都向同一个变量送去非零梯度，两者合计的梯度等于它们之和（上表已逐"
        "元素检查），所以它的范数不超过两个范数相加。",
    ),
    "sharing.gradients.title": _m("Gradients: {form}", "梯度：{form}"),
    "sharing.cost": _m("What each form costs", "每种形式的代价"),
    "sharing.cost.intro": _m(
        "The cell form runs `RNN(LSTMCell)`, which **never takes the cuDNN path**; the layer "
        "form is a plain `LSTM`, which takes it on a GPU when eligible. cuDNN here: {cudnn}.",
        "单元形式运行 `RNN(LSTMCell)`，**永远不走 cuDNN 路径**；层形式是普通的 `LSTM`，在 GPU 上满足"
        "条件时会走 cuDNN。本机 cuDNN：{cudnn}。",
    ),
    "sharing.press_run": _m(
        "Press **Apply and time both forms** in the sidebar to time both on {sequences:,} "
        "sequences (batch × time steps).",
        "点击侧边栏中的**应用并计时两种形式**，在 {sequences:,} 条序列（批量 × 时间步数）上为两者计时。",
    ),
    "sharing.cost.chart": _m(
        "Both paths on {sequences:,} sequences", "两条路径，{sequences:,} 条序列"
    ),
    "sharing.cost.caption": _m(
        "On a CPU both forms run the same generic kernel and cost about the same; the gap "
        "opens on a GPU, where only the layer form can use cuDNN.",
        "在 CPU 上两种形式运行同一个通用内核，代价相近；差距出现在 GPU 上，那里只有层形式能用 cuDNN。",
    ),
    # --- the machine's refusals (hierlstm.refusals): "cannot {doing}: {why}; {fix}." ----------
    "refusal.line": _m("cannot {doing}: {why}; {fix}.", "无法{doing}：{why}；{fix}。"),
    "refusal.results": _m("open the results file {path}", "打开结果文件 {path}"),
    "refusal.store": _m("store a result in {path}", "把结果保存到 {path}"),
    "refusal.export": _m("write the export {path}", "写入导出文件 {path}"),
    "refusal.import": _m("read the import {path}", "读取导入文件 {path}"),
    "refusal.profile": _m("write the profile capture in {path}", "在 {path} 写入剖析记录"),
    "refusal.prune": _m("remove old profile captures in {path}", "删除 {path} 中的旧剖析记录"),
    "refusal.lock": _m("use the device lock folder {path}", "使用设备锁目录 {path}"),
    "refusal.recover": _m("set the damaged file {path} aside", "把损坏的文件 {path} 移到一旁"),
    "refusal.why.missing": _m(
        "no such file or folder, and none can be made there ({detail})",
        "文件或目录不存在，也无法在那里创建（{detail}）",
    ),
    "refusal.why.import.missing": _m("no such file ({detail})", "文件不存在（{detail}）"),
    "refusal.why.denied": _m("permission denied ({detail})", "没有权限（{detail}）"),
    "refusal.why.is_folder": _m("it is a folder, not a file", "它是目录，不是文件"),
    "refusal.why.not_folder": _m(
        "a part of its path is a file, not a folder", "路径中有一段是文件，不是目录"
    ),
    "refusal.why.full": _m(
        "no space left: the disk is full or a file size limit is reached ({detail})",
        "空间不足：磁盘已满或达到文件大小上限（{detail}）",
    ),
    "refusal.why.read_only": _m(
        "the file or its file system is read-only ({detail})",
        "文件或其所在的文件系统是只读的（{detail}）",
    ),
    "refusal.why.busy": _m(
        "another process has kept it locked too long ({detail})",
        "另一个进程锁住它的时间太长（{detail}）",
    ),
    "refusal.why.damaged": _m(
        "it is damaged or not a SQLite database ({detail})",
        "它已损坏或不是 SQLite 数据库（{detail}）",
    ),
    "refusal.why.newer": _m(
        "its results schema is version {detail}, newer than this hierlstm reads",
        "它的结果结构版本是 {detail}，比本 hierlstm 能读的更新",
    ),
    "refusal.why.io": _m(
        "the disk could not write it: full, over a file size limit, or failing ({detail})",
        "磁盘无法写入：已满、超过文件大小上限或出现故障（{detail}）",
    ),
    "refusal.fix.io": _m(
        "free some space or check the disk, then run again", "腾出空间或检查磁盘后再运行"
    ),
    "refusal.why.failed": _m("the system refused ({detail})", "系统拒绝了（{detail}）"),
    "refusal.fix.full": _m("free some space, then run again", "腾出一些空间后再运行"),
    "refusal.fix.busy": _m(
        "wait for the other process to finish, then try again", "等另一个进程结束后再试"
    ),
    "refusal.fix.damaged": _m(
        "it is left as it is: `python -m hierlstm results check` says what can still be read, "
        "and `results recover` (or Recover on the Results page) keeps it renamed and starts a new "
        "file beside it",
        "文件保持原样：`python -m hierlstm results check` 会说明还能读出什么，`results recover`（或结果页上的"
        "“恢复”）会把它改名保留并在旁边新建一个文件",
    ),
    "refusal.fix.newer": _m(
        "upgrade hierlstm, or `python -m hierlstm results recover` (Recover on the Results page) "
        "keeps it renamed and starts a new file beside it",
        "升级 hierlstm，或用 `python -m hierlstm results recover`（结果页上的“恢复”）把它改名保留并在旁边"
        "新建一个文件",
    ),
    "refusal.fix.results": _m(
        "set HIERLSTM_DB to a file in a writable folder (the CLI also takes --db)",
        "把 HIERLSTM_DB 设为一个可写目录中的文件（命令行也可用 --db）",
    ),
    "refusal.fix.export": _m(
        "choose another --output file, in a writable folder", "换一个 --output 文件，放在可写目录中"
    ),
    "refusal.fix.import": _m("check the file's name and path", "检查文件名和路径"),
    "refusal.fix.profile": _m(
        "pass --logdir a writable folder, or set XDG_DATA_HOME to one",
        "用 --logdir 指定一个可写目录，或把 XDG_DATA_HOME 设为可写目录",
    ),
    "refusal.fix.prune": _m(
        "the new capture is kept; remove old ones by hand", "新的剖析记录已保留；请手动删除旧记录"
    ),
    "refusal.fix.lock": _m(
        "set HIERLSTM_LOCK_DIR to a writable folder; until then runs of other processes may overlap",
        "把 HIERLSTM_LOCK_DIR 设为可写目录；在此之前其他进程的运行可能重叠",
    ),
    "refusal.not_kept": _m(
        "Results are not being kept: {why} Runs still run and show their charts.",
        "结果没有被保存：{why} 运行仍可进行并显示图表。",
    ),
    "results.recover.button": _m(
        "Keep the damaged file aside and start a new one", "把损坏的文件改名保留并新建一个"
    ),
    "results.recover.done": _m(
        "The damaged file was kept as {kept}; a new results file is at {path}.",
        "损坏的文件已保留为 {kept}；新的结果文件位于 {path}。",
    ),
    # --- results -------------------------------------------------------------------------------
    "results.title": _m("Stored results", "已保存的结果"),
    "results.intro": _m(
        "Every measurement made here (and with the CLI) is stored with its settings, device "
        "and library versions. Filter, compare, export; import runs made elsewhere, e.g. "
        "`python -m hierlstm bench` on a GPU server.",
        "这里（以及命令行）做的每次测量都连同其设置、设备和库版本一起保存。可以筛选、比较、导出；也可以"
        "导入在其他地方完成的运行，例如在 GPU 服务器上用 `python -m hierlstm bench` 得到的结果。",
    ),
    "results.filter.variant": _m("Variant", "变体"),
    "results.filter.device": _m("Device", "设备"),
    "results.filter.batch_size": _m("Batch size", "批量大小"),
    "results.filter.time_steps": _m("Time steps", "时间步数"),
    "results.filter.precision": _m("Precision", "精度"),
    "results.filter.task": _m("Measured", "测量内容"),
    "results.filter.status": _m("Status", "状态"),
    "results.filter.all": _m("all", "全部"),
    "results.count": _m(
        "{shown} of {total} stored runs shown ({path}).",
        "显示 {total} 条已保存运行中的 {shown} 条（{path}）。",
    ),
    "results.compare": _m("Runs to compare", "要比较的运行"),
    "results.compare.help": _m(
        "The newest six are chosen at first; add or remove any.",
        "默认选中最新的六条；可以任意增删。",
    ),
    "results.empty": _m(
        "Nothing stored yet: run a benchmark, or import a file below.",
        "还没有保存的结果：运行一次基准测试，或在下方导入文件。",
    ),
    "results.export": _m("Export", "导出"),
    "results.export.csv": _m("Every stored run (CSV)", "所有已保存运行（CSV）"),
    "results.export.json": _m("Every stored run (JSON)", "所有已保存运行（JSON）"),
    "results.import": _m("Import", "导入"),
    "results.import.intro": _m(
        "A CSV or JSON export from this app or the CLI. A file with any bad row is rejected "
        "whole; runs already stored are skipped.",
        "本应用或命令行导出的 CSV 或 JSON 文件。只要有一行有问题，整个文件都会被拒绝；已保存过的运行会被跳过。",
    ),
    "results.import.file": _m("Results file", "结果文件"),
    "results.import.button": _m("Import", "导入"),
    "results.import.none": _m("Choose a file first.", "请先选择文件。"),
    "results.imported": _m(
        "Imported {added} run(s); {skipped} already stored.",
        "已导入 {added} 条运行；{skipped} 条已存在。",
    ),
    # --- lesson ----------------------------------------------------------------------------------
    "lesson.title": _m("The question, the answer, and this machine", "问题、回答与这台机器"),
    "lesson.intro": _m(
        "A Stack Exchange asker (Ceday) built a hierarchical LSTM over spectrograms and asked "
        "why it was slow and how to parallelise it. The answer gave six pieces of advice. Here "
        "each is checked with live numbers from this machine, at the sizes in the sidebar.",
        "Stack Exchange 上的提问者（Ceday）在频谱图上搭建了一个分层 LSTM，问它为什么慢、如何并行化。"
        "回答给出了六条建议。这里按侧边栏中的尺寸，用本机的实时数字逐条检验。",
    ),
    "lesson.press_run": _m(
        "Numbers marked as measured appear after **Measure the lesson's numbers** in the "
        "sidebar (every variant, plus folded at mixed precision, at batch {batch} × {time} time "
        "steps; some seconds). The other numbers are computed live already.",
        "点击侧边栏中的**测量课程中的数字**后会出现测量值（所有变体，外加混合精度下的 folded，批量 "
        "{batch} × {time} 个时间步；需要几秒钟）。其他数字已经实时计算好。",
    ),
    "lesson.quote.nesting": _m(
        "The answer: “you don't need to nest the summarising LSTM and the next LSTM in a custom "
        "cell at all; that is the key reason it is slow: nesting disables cuDNN acceleration.”",
        "回答：“你完全不需要把汇总LSTM和后续LSTM嵌套在自定义Cell里——这正是导致速度慢的关键原因："
        "嵌套结构会让CuDNN的硬件加速失效。”",
    ),
    "lesson.quote.time_distributed": _m(
        "The answer: “TimeDistributed iterates over the outer time axis by itself … fully using "
        "cuDNN's GPU acceleration.”",
        "回答：“TimeDistributed会自动遍历外层时间步维度……完全利用CuDNN的GPU硬件加速。”",
    ),
    "lesson.quote.cudnn": _m(
        "The answer: “x_final = CuDNNLSTM(60, return_sequences=True)(x_summarized)”",
        "回答：“x_final = CuDNNLSTM(60, return_sequences=True)(x_summarized)”",
    ),
    "lesson.quote.sharing": _m(
        "The answer: “instantiate one LSTMCell object and use it in several independent RNN "
        "layers … the hidden states h and c stay completely independent.”",
        "回答：“只需要实例化一个LSTMCell对象，然后在多个独立的RNN层中使用它即可……它们的隐藏状态h和"
        "细胞状态c是完全独立的。”",
    ),
    "lesson.quote.precision": _m(
        "The answer: “enable mixed precision (tf.keras.mixed_precision.set_global_policy("
        "'mixed_float16')) to speed things up further.”",
        "回答：“启用混合精度训练（tf.keras.mixed_precision.set_global_policy('mixed_float16')），"
        "可以进一步提升GPU计算速度。”",
    ),
    "lesson.quote.vmap": _m(
        "The answer: “if you must keep a custom loop, use tf.vectorized_map instead of a Python "
        "for loop.”",
        "回答：“如果必须自定义循环逻辑，用tf.vectorized_map替代Python的for循环。”",
    ),
    "lesson.quote.batch": _m(
        "The answer: “increase batch_size: a larger batch keeps the GPU's cores busier.”",
        "回答：“增大batch_size：更大的batch_size能让GPU的计算核心更充分地利用。”",
    ),
    "lesson.q.title": _m("1 · The question's model", "1 · 问题中的模型"),
    "lesson.q.body": _m(
        "Conv2D and pooling turn each spectrogram into 12 rows × 16 channels per time step; "
        "Permute makes every time step a 12-step sub-sequence; an inner LSTM(48) summarises "
        "each sub-sequence and an outer LSTM(60) runs over time. The asker put both LSTMs in "
        "one custom RNN cell. Here is the model at your sizes (the folded form):",
        "Conv2D 和池化把每个频谱图在每个时间步变成 12 行 × 16 通道；Permute 让每个时间步成为一个 12 步"
        "的子序列；内层 LSTM(48) 概括每个子序列，外层 LSTM(60) 沿时间运行。提问者把两个 LSTM 都放进了"
        "一个自定义 RNN 单元。下面是按你的尺寸构建的模型（folded 形式）：",
    ),
    "lesson.chain.title": _m(
        "2 · Why nesting is slow: the dependent chain", "2 · 嵌套为什么慢：依赖链"
    ),
    "lesson.chain.body": _m(
        "True, but cuDNN is only half of it. Nesting makes every outer step wait for a whole "
        "inner loop: with {rows} rows and {time} time steps, **{nested:,}** LSTM steps must run "
        "one after another. Folding batch and time runs all inner loops at once: **{folded:,}** "
        "dependent steps. No hardware parallelises a dependent chain, so this gap shows on a "
        "CPU as well.",
        "说得对，但 cuDNN 只是一半原因。嵌套让每个外层步都等待一整个内层循环：{rows} 行、{time} 个时间"
        "步时，必须依次执行 **{nested:,}** 个 LSTM 步。把批量和时间折叠后，所有内层循环同时运行：依赖步"
        "只有 **{folded:,}** 个。任何硬件都无法并行一条依赖链，所以在 CPU 上同样能看到这个差距。",
    ),
    "lesson.metric.chain": _m("{variant}: dependent steps", "{variant}：依赖步数"),
    "lesson.metric.median": _m("{variant}: measured", "{variant}：实测"),
    "lesson.metric.faster": _m("{speedup:.2g}× faster", "快 {speedup:.2g} 倍"),
    "lesson.td.title": _m(
        "3 · What TimeDistributed does in Keras 3", "3 · Keras 3 中的 TimeDistributed 做了什么"
    ),
    "lesson.td.body": _m(
        "Keras 2 folded batch and time into one axis. **Keras 3 does not**: with a known "
        "length it calls the inner LSTM once per time step, so the graph holds {time} inner "
        "loops and its first call (tracing) grows with the length.",
        "Keras 2 会把批量和时间折叠成一个轴。**Keras 3 不会**：长度已知时，它每个时间步调用一次内层 "
        "LSTM，所以图里有 {time} 个内层循环，首次调用（追踪）的时间随长度增长。",
    ),
    "lesson.metric.first_call": _m("{variant}: first call", "{variant}：首次调用"),
    "lesson.td.first_call.help": _m(
        "Tracing {time} inner LSTM calls, plus the first execution.",
        "追踪 {time} 次内层 LSTM 调用，加上首次执行。",
    ),
    "lesson.td.bug": _m(
        "With an **unknown** time length (`Input(shape=(36, None, 1))`, exactly the answer's "
        "code) Keras 3 takes a `vectorized_map` path that maps over the **batch** axis instead "
        "of time: wrong shapes when batch < time, an error when batch > time, right only when "
        "they are equal.",
        "当时间长度**未知**时（`Input(shape=(36, None, 1))`，正是回答中的代码），Keras 3 走的 "
        "`vectorized_map` 路径映射的是**批量**轴而不是时间轴：批量 < 时间时形状错误，批量 > 时间时报错，"
        "只有两者相等时才正确。",
    ),
    "lesson.td.reproduce": _m("Reproduce it now (a few seconds)", "现在复现（需要几秒钟）"),
    "lesson.td.running": _m("Running the answer's model…", "正在运行回答中的模型…"),
    "lesson.td.col.input": _m("input", "输入"),
    "lesson.td.col.expected": _m("right output", "正确输出"),
    "lesson.td.col.actual": _m("what Keras returned", "Keras 实际返回"),
    "lesson.td.col.verdict": _m("right?", "正确？"),
    "lesson.td.error": _m("error: {error}", "错误：{error}"),
    "lesson.td.bug.caption": _m(
        "Run live with this machine's Keras (hierlstm.model.pitfalls). The time_distributed variant "
        "is therefore built for the concrete length; folded avoids the wrapper altogether.",
        "用本机的 Keras 现场运行（hierlstm.model.pitfalls）。因此 time_distributed 变体按具体长度构建；"
        "folded 则完全不用这个包装层。",
    ),
    "lesson.cudnn.title": _m("4 · CuDNNLSTM is gone", "4 · CuDNNLSTM 已经不存在"),
    "lesson.cudnn.body": _m(
        "`hasattr(keras.layers, 'CuDNNLSTM')` is **{has}** in Keras {keras}: the answer's code "
        "does not run any more. `keras.layers.LSTM` takes the cuDNN kernel by itself when "
        "`use_cudnn` is auto, the activations are tanh/sigmoid, there is no recurrent dropout, "
        "it is not unrolled, it uses a bias, and a GPU is visible. `RNN(LSTMCell)` and custom "
        "cells never do. Under XLA hierlstm builds every LSTM with `use_cudnn=False`: XLA "
        "compiles the whole step, and XLA cannot compile cuDNN's kernel (`CudnnRNNV3`), so on a "
        "GPU the choice is cuDNN without XLA, or XLA with the generic kernel.",
        "在 Keras {keras} 中 `hasattr(keras.layers, 'CuDNNLSTM')` 为 **{has}**：回答中的代码已经无法运行。"
        "`keras.layers.LSTM` 在以下条件下会自行使用 cuDNN 内核：`use_cudnn` 为 auto、激活函数为 "
        "tanh/sigmoid、没有循环 dropout、不展开、使用偏置，并且能看到 GPU。`RNN(LSTMCell)` 和自定义单元"
        "永远不会。开启 XLA 时 hierlstm 用 `use_cudnn=False` 构建每个 LSTM：XLA 编译整个步骤，而 XLA "
        "无法编译 cuDNN 的内核（`CudnnRNNV3`），所以在 GPU 上只能二选一：cuDNN 不用 XLA，或 XLA 用通用内核。",
    ),
    "lesson.cudnn.here": _m("On this machine cuDNN is {status}.", "本机 cuDNN：{status}。"),
    "lesson.sharing.title": _m("5 · Weight sharing", "5 · 权重共享"),
    "lesson.sharing.body": _m(
        "Checked live: the two RNN layers use the same variable objects: **{same}**; "
        "**{params:,}** parameters instead of {unshared:,}; path b's output changes by "
        "**{leak:.3g}** when path a gets another input, so states are independent. The answer "
        "is right, but the cell form gives up cuDNN; one LSTM layer called twice shares the "
        "same way and keeps it.",
        "现场检查：两个 RNN 层使用同一组变量对象：**{same}**；参数量 **{params:,}** 而不是 {unshared:,}；"
        "路径 a 换一个输入时，路径 b 的输出变化 **{leak:.3g}**，说明状态相互独立。回答是对的，但单元形式"
        "放弃了 cuDNN；对同一个 LSTM 层调用两次同样能共享权重，而且保留 cuDNN。",
    ),
    "lesson.sharing.cost": _m(
        "Measured in the model: the RNN(LSTMCell) summariser {cell}, the LSTM one (folded) "
        "{layer}.",
        "模型中的实测：RNN(LSTMCell) 摘要器 {cell}，LSTM 摘要器（folded）{layer}。",
    ),
    "lesson.sharing.link": _m("Gradients and timing: Weight sharing", "梯度与计时：权重共享页"),
    "lesson.precision.title": _m("6 · Mixed precision", "6 · 混合精度"),
    "lesson.precision.body": _m(
        "Mixed precision speeds up GPUs with Tensor Cores (float16 from compute capability "
        "7.0, bfloat16 from 8.0). On a CPU without native 16-bit arithmetic it is emulated and "
        "usually **slower**. hierlstm sets it per layer, never with the answer's global "
        "`set_global_policy`, which would change every model built afterwards in the process.",
        "混合精度能加速带 Tensor Core 的 GPU（float16 需计算能力 7.0 以上，bfloat16 需 8.0 以上）。在没有"
        "原生 16 位运算的 CPU 上它是模拟实现，通常**更慢**。hierlstm 逐层设置精度，从不使用回答中的全局 "
        "`set_global_policy`——它会改变进程中之后构建的每个模型。",
    ),
    "lesson.precision.chart": _m("folded at each precision", "各精度下的 folded"),
    "lesson.vmap.title": _m("7 · tf.vectorized_map", "7 · tf.vectorized_map"),
    "lesson.vmap.body": _m(
        "`tf.vectorized_map` turns a per-time-step program into one program over all steps, "
        "so its dependent chain is {chain:,} steps, like folded. It pays for the rewriting: a "
        "longer first call, and ops pfor cannot convert (cuDNN's) fall back to a loop. An "
        "explicit reshape does the same job with plain layers.",
        "`tf.vectorized_map` 把单个时间步的程序变成覆盖所有时间步的一个程序，所以它的依赖链和 folded "
        "一样是 {chain:,} 步。代价是改写：首次调用更长，而且 pfor 无法转换的算子（如 cuDNN 的）会退回到"
        "循环。显式 reshape 用普通层就能完成同样的事。",
    ),
    "lesson.batch.title": _m("8 · Larger batches", "8 · 更大的批量"),
    "lesson.batch.body": _m(
        "A larger batch gives each dependent step more independent work, so throughput rises "
        "until the device is full. Folding batch and time is the same idea applied inside the "
        "model: batch × time sub-sequences in one call.",
        "更大的批量让每个依赖步有更多独立的工作，吞吐量会一直上升，直到设备被占满。把批量和时间折叠是"
        "同一个思想在模型内部的应用：一次调用处理批量 × 时间条子序列。",
    ),
    "lesson.batch.link": _m("Measure it: Scaling", "测量它：规模扩展页"),
    "lesson.train.title": _m(
        "9 · Training: where nesting hurts most", "9 · 训练：嵌套代价最大的地方"
    ),
    "lesson.train.body": _m(
        "The question's model is slow to *train*. A training step runs the forward pass, then "
        "the backward pass through both recurrences in reverse: for nested that is the same "
        "chain of {chain} dependent LSTM steps again, each inner loop's {rows} steps replayed "
        "backwards inside every outer step, and every step's gates and states must be kept "
        "from the forward pass until the backward pass reaches them. Folding turns the inner "
        "recurrence into one batched LSTM call, so its backward pass is one batched call too.",
        "提问者的模型*训练*很慢。一个训练步先做前向传播，再沿两层循环反向做反向传播：对 nested 来说，又要"
        "走一遍同样长的 {chain} 个依赖 LSTM 步，每个外层步里都要把内层循环的 {rows} 步倒着重放一遍；而且"
        "每一步的门和状态都必须从前向保留到反向用到它为止。折叠把内层循环变成一次批量的 LSTM 调用，所以它的"
        "反向也是一次批量调用。",
    ),
    "lesson.train.metric.step": _m("{variant}: training step", "{variant}：训练步"),
    "lesson.train.metric.step.help": _m(
        "Median of the whole step (forward, loss, gradients, SGD update) as one compiled "
        "function, measured in the lesson's interleaved rounds.",
        "整步（前向、损失、梯度、SGD 更新）作为一个编译函数的中位数，在课程的交错轮次中测得。",
    ),
    "lesson.train.metric.ratio": _m("{variant}: step / forward", "{variant}：训练步 / 前向"),
    "lesson.train.metric.kept": _m(
        "{variant}: activations kept for backward (est.)", "{variant}：为反向保留的激活（估计）"
    ),
    "lesson.train.here": _m(
        "Here folded's training step is **{speedup:.2g}×** faster than nested's, against "
        "{forward_speedup:.2g}× for the forward pass alone.",
        "在这里，folded 的训练步比 nested 快 **{speedup:.2g} 倍**，而仅前向传播时快 {forward_speedup:.2g} 倍。",
    ),
    "lesson.train.press": _m(
        "Press **Measure the lesson's numbers** to time a training step of {variants} here.",
        "点击**测量课程中的数字**，在这里为 {variants} 计时一个训练步。",
    ),
    # --- charts -------------------------------------------------------------------------------
    "chart.variant": _m("variant", "变体"),
    "chart.flow.title": _m(
        "Where each axis goes: bands that meet are folded into one axis; a band that ends is "
        "consumed by an LSTM",
        "每个轴的去向：汇合的条带被折叠成一个轴；中止的条带被 LSTM 消耗",
    ),
    "chart.flow.x": _m("layer, in order", "层（按顺序）"),
    "chart.flow.y": _m("position in the shape (axis index)", "在形状中的位置（轴序号）"),
    "chart.flow.hover": _m(
        "{step}: axis {position} = {axis}, size {size} (symbolic {symbolic})",
        "{step}：第 {position} 轴 = {axis}，大小 {size}（符号 {symbolic}）",
    ),
    "chart.latency.title": _m(
        "Latency per forward pass (median, p10–p90)", "每次前向的延迟（中位数，p10–p90）"
    ),
    "chart.latency.y": _m("time per forward pass (ms)", "每次前向时间（毫秒）"),
    "chart.latency.title.training": _m(
        "Time per training step (median, p10–p90)", "每个训练步的时间（中位数，p10–p90）"
    ),
    "chart.latency.y.training": _m("time per training step (ms)", "每个训练步的时间（毫秒）"),
    "chart.phases.title": _m(
        "A training step's phases (medians; ◆ the whole step)", "训练步的各阶段（中位数；◆ 为整步）"
    ),
    "chart.phases.y": _m("time per training step (ms)", "每个训练步的时间（毫秒）"),
    "chart.phases.forward": _m("forward", "前向"),
    "chart.phases.backward": _m("backward", "反向"),
    "chart.phases.update": _m("update", "更新"),
    "chart.phases.step": _m("whole step", "整步"),
    "chart.train_memory.title": _m(
        "Training memory: measured peak, estimated kept", "训练内存：实测峰值与估计保留量"
    ),
    "chart.train_memory.y": _m("memory (MiB)", "内存（MiB）"),
    "chart.train_memory.measured": _m("measured: {kind}", "实测：{kind}"),
    "chart.train_memory.estimated": _m(
        "estimated: activations kept for backward", "估计：为反向保留的激活"
    ),
    "chart.speedup.title": _m(
        "Speed-up against {baseline} (paired rounds)", "相对 {baseline} 的加速比（配对轮次）"
    ),
    "chart.speedup.y": _m("speed-up vs {baseline} (×)", "相对 {baseline} 的加速比（倍）"),
    "chart.first_call.title": _m(
        "First call (tracing + first run) vs steady state", "首次调用（追踪 + 首次运行）与稳态对比"
    ),
    "chart.first_call.first": _m("first call", "首次调用"),
    "chart.first_call.steady": _m("steady-state median", "稳态中位数"),
    "chart.first_call.y": _m("time (ms, log scale)", "时间（毫秒，对数刻度）"),
    "chart.throughput.title": _m("Throughput", "吞吐量"),
    "chart.throughput.y": _m("spectrograms per second (1/s)", "每秒处理的频谱图（个/秒）"),
    "chart.gflops.title": _m(
        "Achieved GFLOP/s (analytic FLOPs / median time)", "实际 GFLOP/s（解析 FLOPs / 中位时间）"
    ),
    "chart.gflops.y": _m("GFLOP/s (10⁹ FLOPs per second)", "GFLOP/s（每秒 10⁹ 次浮点运算）"),
    "chart.layers.title": _m(
        "Per-layer time of {variant} (median, p10–p90)", "{variant} 各层耗时（中位数，p10–p90）"
    ),
    "chart.layers.x": _m("median time (ms)", "中位时间（毫秒）"),
    "chart.layers.y": _m("layer", "层"),
    "chart.scaling.title": _m("Latency against {axis} (log-log)", "延迟与{axis}的关系（双对数）"),
    "chart.scaling.crossover": _m("crossover", "交叉点"),
    "chart.scaling.crossover_hover": _m(
        "{first} faster below ≈{value:.3g}, {second} above",
        "≈{value:.3g} 以下 {first} 更快，以上 {second} 更快",
    ),
    "chart.replicas.throughput.title": _m(
        "Throughput against replicas",
        "吞吐量与副本数的关系",
    ),
    "chart.replicas.efficiency.title": _m(
        "Scaling efficiency (1 = perfect)",
        "扩展效率（1 = 完美）",
    ),
    "chart.replicas.x": _m("replicas (count)", "副本数（个）"),
    "chart.replicas.ideal": _m(
        "{variant}, ideal (n × one replica)", "{variant}，理想值（n × 单副本）"
    ),
    "chart.replicas.efficiency.y": _m(
        "throughput(n) / (n × throughput(1)) (ratio)", "吞吐量(n) /（n × 吞吐量(1)）（比值）"
    ),
    "chart.cost.title.time_steps": _m(
        "Fitted cost of one more time step", "拟合得到的每多一个时间步的代价"
    ),
    "chart.cost.title.batch_size": _m(
        "Fitted cost of one more spectrogram", "拟合得到的每多一个频谱图的代价"
    ),
    "chart.cost.y.time_steps": _m("time per extra time step (ms)", "每多一个时间步的时间（毫秒）"),
    "chart.cost.y.batch_size": _m(
        "time per extra spectrogram (ms)", "每多一个频谱图的时间（毫秒）"
    ),
    "chart.chain.title": _m(
        "Dependent chain of LSTM steps (computed)", "LSTM 步的依赖链（计算值）"
    ),
    "chart.chain.y": _m(
        "sequential LSTM steps (count, log scale)", "顺序 LSTM 步数（个，对数刻度）"
    ),
    "chart.runs.title": _m(
        "Stored runs compared (median, p10–p90)", "已保存运行的比较（中位数，p10–p90）"
    ),
    "chart.runs.x": _m(
        "run (variant · sizes · precision · device · time)",
        "运行（变体 · 尺寸 · 精度 · 设备 · 时间）",
    ),
    "chart.gradients.title": _m("Gradient norms per shared variable", "每个共享变量的梯度范数"),
    "chart.gradients.a": _m("from path a", "来自路径 a"),
    "chart.gradients.b": _m("from path b", "来自路径 b"),
    "chart.gradients.total": _m("from both", "两者合计"),
    "chart.gradients.x": _m("shared variable", "共享变量"),
    "chart.gradients.y": _m("gradient L2 norm (unitless)", "梯度 L2 范数（无量纲）"),
}


def has_text(key: str, lang: str) -> bool:
    return lang in MESSAGES.get(key, {})


def t(key: str, lang: str = DEFAULT_LANGUAGE, **values) -> str:
    """Message `key` in `lang` (English if that language lacks it), formatted with `values`.

    An unknown key comes back as the key itself, so a missing text shows, never crashes a page;
    the tests check that every key the app uses is in the catalogue.
    """
    entry = MESSAGES.get(key)
    if entry is None:
        return key
    template = entry.get(lang) or entry[DEFAULT_LANGUAGE]
    return template.format(**values) if values else template
