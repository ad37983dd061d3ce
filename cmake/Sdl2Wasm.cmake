# SDL2 2.26.5 (Debian's source package, third_party/sdl2) as a static library of the web build.
# Compiled straight from its sources with SDL's own Emscripten configuration header
# (include/SDL_config_emscripten.h, which include/SDL_config.h selects under __EMSCRIPTEN__), as
# Emscripten's own SDL2 port does (emscripten tools/ports/sdl2.py): SDL's CMake configure step runs
# ~320 checks, each an emcc call, 211 CPU-s on this machine before a single file is compiled.
# The sources are those SDL's CMake build compiles for Emscripten, less the renderers of other
# platforms (Direct3D, PS2, PSP, Vita), which compile to nothing there.
enable_language(C)
set(TRAINCLOCK_SDL2_DIR "${TRAINCLOCK_THIRD_PARTY_DIR}/sdl2")
if(NOT EXISTS "${TRAINCLOCK_SDL2_DIR}/include/SDL_config_emscripten.h")
    message(FATAL_ERROR "SDL2 sources missing in ${TRAINCLOCK_SDL2_DIR}: run scripts/setup-web.sh")
endif()

set(sdl2_sources
    SDL.c SDL_assert.c SDL_dataqueue.c SDL_error.c SDL_guid.c SDL_hints.c SDL_list.c SDL_log.c SDL_utils.c
    atomic/SDL_atomic.c atomic/SDL_spinlock.c
    audio/SDL_audio.c audio/SDL_audiocvt.c audio/SDL_audiodev.c audio/SDL_audiotypecvt.c audio/SDL_mixer.c
    audio/SDL_wave.c audio/dummy/SDL_dummyaudio.c audio/disk/SDL_diskaudio.c audio/emscripten/SDL_emscriptenaudio.c
    cpuinfo/SDL_cpuinfo.c
    dynapi/SDL_dynapi.c
    events/SDL_clipboardevents.c events/SDL_displayevents.c events/SDL_dropevents.c events/SDL_events.c
    events/SDL_gesture.c events/SDL_keyboard.c events/SDL_keysym_to_scancode.c events/SDL_mouse.c events/SDL_quit.c
    events/SDL_scancode_tables.c events/SDL_touch.c events/SDL_windowevents.c events/imKStoUCS.c
    file/SDL_rwops.c
    filesystem/emscripten/SDL_sysfilesystem.c
    haptic/SDL_haptic.c haptic/dummy/SDL_syshaptic.c
    hidapi/SDL_hidapi.c
    joystick/SDL_gamecontroller.c joystick/SDL_joystick.c joystick/controller_type.c
    joystick/virtual/SDL_virtualjoystick.c joystick/emscripten/SDL_sysjoystick.c
    libm/e_atan2.c libm/e_exp.c libm/e_fmod.c libm/e_log.c libm/e_log10.c libm/e_pow.c libm/e_rem_pio2.c
    libm/e_sqrt.c libm/k_cos.c libm/k_rem_pio2.c libm/k_sin.c libm/k_tan.c libm/s_atan.c libm/s_copysign.c
    libm/s_cos.c libm/s_fabs.c libm/s_floor.c libm/s_scalbn.c libm/s_sin.c libm/s_tan.c
    loadso/dlopen/SDL_sysloadso.c
    locale/SDL_locale.c locale/emscripten/SDL_syslocale.c
    main/dummy/SDL_dummy_main.c
    misc/SDL_url.c misc/emscripten/SDL_sysurl.c
    power/SDL_power.c power/emscripten/SDL_syspower.c
    render/SDL_d3dmath.c render/SDL_render.c render/SDL_yuv_sw.c
    render/opengl/SDL_render_gl.c render/opengl/SDL_shaders_gl.c render/opengles/SDL_render_gles.c
    render/opengles2/SDL_render_gles2.c render/opengles2/SDL_shaders_gles2.c
    render/software/SDL_blendfillrect.c render/software/SDL_blendline.c render/software/SDL_blendpoint.c
    render/software/SDL_drawline.c render/software/SDL_drawpoint.c render/software/SDL_render_sw.c
    render/software/SDL_rotate.c render/software/SDL_triangle.c
    sensor/SDL_sensor.c sensor/dummy/SDL_dummysensor.c
    stdlib/SDL_crc16.c stdlib/SDL_crc32.c stdlib/SDL_getenv.c stdlib/SDL_iconv.c stdlib/SDL_malloc.c
    stdlib/SDL_mslibc.c stdlib/SDL_qsort.c stdlib/SDL_stdlib.c stdlib/SDL_string.c stdlib/SDL_strtokr.c
    thread/SDL_thread.c thread/generic/SDL_syscond.c thread/generic/SDL_sysmutex.c thread/generic/SDL_syssem.c
    thread/generic/SDL_systhread.c thread/generic/SDL_systls.c
    timer/SDL_timer.c timer/unix/SDL_systimer.c
    video/SDL_RLEaccel.c video/SDL_blit.c video/SDL_blit_0.c video/SDL_blit_1.c video/SDL_blit_A.c video/SDL_blit_N.c
    video/SDL_blit_auto.c video/SDL_blit_copy.c video/SDL_blit_slow.c video/SDL_bmp.c video/SDL_clipboard.c
    video/SDL_egl.c video/SDL_fillrect.c video/SDL_pixels.c video/SDL_rect.c video/SDL_shape.c video/SDL_stretch.c
    video/SDL_surface.c video/SDL_video.c video/SDL_vulkan_utils.c video/SDL_yuv.c video/yuv2rgb/yuv_rgb.c
    video/emscripten/SDL_emscriptenevents.c video/emscripten/SDL_emscriptenframebuffer.c
    video/emscripten/SDL_emscriptenmouse.c video/emscripten/SDL_emscriptenopengles.c
    video/emscripten/SDL_emscriptenvideo.c)
list(TRANSFORM sdl2_sources PREPEND "${TRAINCLOCK_SDL2_DIR}/src/")

add_library(trainclock_sdl2 STATIC ${sdl2_sources})
target_include_directories(trainclock_sdl2 SYSTEM PUBLIC "${TRAINCLOCK_SDL2_DIR}/include")
# SDL's own flags for this build (its CMakeLists.txt): the bundled Khronos headers after the
# system's, hidden symbols, no strict aliasing; its warnings are not ours (-w).
target_compile_options(trainclock_sdl2 PRIVATE -idirafter "${TRAINCLOCK_SDL2_DIR}/src/video/khronos" -fno-strict-aliasing
                                               -fvisibility=hidden -w)
target_compile_definitions(trainclock_sdl2 PRIVATE SDL_STATIC_LIB)
