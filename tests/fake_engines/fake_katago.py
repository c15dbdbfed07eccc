#!/usr/bin/env python3
"""A stand-in for KataGo's program for the katago:VISITS tests: `fake_katago.py gtp -config C
-model M`, doing what $FAKE_KATAGO_MODE says:
  fuse      the AppImage runtime's FUSE notice on stdout, then a GTP engine that passes
  noopencl  KataGo's start-up lines and its OpenCL error on stderr, exit status 134
  badmodel  an error loading its network on stderr, exit status 1
  hang      never answers (an OpenCL tuner that hangs)
  tunecrash the OpenCL tuner's first lines, then an abort (SIGABRT), as pocl crashing in tuning
  record    copies its config to $FAKE_KATAGO_RECORD, then a GTP engine that passes
  visits    a GTP engine that searches $FAKE_VISIT_SECONDS a visit (fake_gtp.py visits)
"""
import os
import shutil
import sys
import time

FAKE_GTP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_gtp.py")


def main():
    mode = os.environ.get("FAKE_KATAGO_MODE", "fuse")
    args = sys.argv[1:]
    config = args[args.index("-config") + 1] if "-config" in args else None
    if mode == "noopencl":
        sys.stderr.write("KataGo v1.18.1\nUsing koPOSITIONALscoreAREAtaxNONEsui0 rules initially\n"
                         "terminate called after throwing an instance of 'StringError'\n"
                         "  what():  OpenCL error at openclhelpers.cpp, func err, line 308, "
                         "error CL_PLATFORM_NOT_FOUND_KHR\n")
        sys.exit(134)
    if mode == "badmodel":
        sys.stderr.write("KataGo v1.18.1\nError loading or parsing model file model.bin.gz\n")
        sys.exit(1)
    if mode == "hang":
        time.sleep(3600)
    if mode == "tunecrash":
        sys.stderr.write("KataGo v1.18.1\nPerforming autotuning\n*** On iteration 3 ***\n"
                         "pocl error: encountered unimplemented part of the OpenCL specs\n")
        sys.stderr.flush()
        os.abort()
    if mode == "fuse":
        sys.stdout.write("Error: No suitable fusermount binary found on the $PATH\n\n"
                         "Cannot mount AppImage, please check your FUSE setup.\n")
        sys.stdout.flush()
    if mode == "record" and config:
        shutil.copyfile(config, os.environ["FAKE_KATAGO_RECORD"])
    if mode == "visits":
        os.execv(sys.executable, [sys.executable, FAKE_GTP, "visits",
                                  os.environ["FAKE_VISIT_SECONDS"]])
    os.execv(sys.executable, [sys.executable, FAKE_GTP, "pass"])


if __name__ == "__main__":
    main()
