; mavboard's Windows installer, built by `./packaging/dev.sh windows` with Debian's makensis (nothing is
; downloaded at build time). The defines come from the command line:
;   VERSION     the version (Cargo.toml's)
;   SRCDIR      the laid-out folder (mavboard.exe, ONNX Runtime, the VC++ runtime, assets\models, licences)
;   FILELIST    an include, written from SRCDIR by dev.sh, with the uninstaller's Delete and RMDir lines:
;               the uninstaller removes exactly the files it installed, and a folder only once it is empty
;   OUTFILE     the installer to write
;   ICON        optional: the installer's and uninstaller's icon (packaging/icons.sh renders it)
; Per-user by default (into %LOCALAPPDATA%\Programs\mavboard, registered under HKCU, no administrator
; rights); `/ALLUSERS` installs machine-wide (into Program Files, registered under HKLM; run it as an
; administrator). `/S` is silent, `/D=C:\path` chooses the folder (last on the command line, unquoted).

Unicode true
SetCompressor /SOLID lzma
RequestExecutionLevel user
ManifestDPIAware true
Target amd64-unicode

!include LogicLib.nsh
!include FileFunc.nsh
!include MUI2.nsh

!ifndef VERSION | SRCDIR | FILELIST | OUTFILE
  !error "define VERSION, SRCDIR, FILELIST and OUTFILE (see the top of this file)"
!endif

!define APP "mavboard"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\mavboard"
!define PGN_CLASS "mavboard.pgn"

Name "${APP} ${VERSION}"
OutFile "${OUTFILE}"
InstallDir ""
BrandingText "${APP} ${VERSION}"
VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "${APP}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileDescription" "${APP} installer"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "LegalCopyright" "mavboard developers, GPL-3.0-or-later"

Var AllUsers

!ifdef ICON
  !define MUI_ICON "${ICON}"
  !define MUI_UNICON "${ICON}"
!endif

!define MUI_FINISHPAGE_RUN "$INSTDIR\mavboard.exe"
!insertmacro MUI_PAGE_LICENSE "${SRCDIR}\licences\mavboard-LICENSE.txt"
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

Function .onInit
  SetRegView 64
  StrCpy $AllUsers 0
  ${GetParameters} $0
  ClearErrors
  ${GetOptions} $0 "/ALLUSERS" $1
  ${IfNot} ${Errors}
    StrCpy $AllUsers 1
  ${EndIf}
  ${If} $AllUsers == 1
    SetShellVarContext all
    ${If} $INSTDIR == ""
      StrCpy $INSTDIR "$PROGRAMFILES64\${APP}"
    ${EndIf}
  ${Else}
    SetShellVarContext current
    ${If} $INSTDIR == ""
      StrCpy $INSTDIR "$LOCALAPPDATA\Programs\${APP}"
    ${EndIf}
  ${EndIf}
FunctionEnd

Section "mavboard" SecMain
  SectionIn RO
  SetOutPath "$INSTDIR"
  File /r "${SRCDIR}\*"
  WriteUninstaller "$INSTDIR\uninstall.exe"

  CreateShortCut "$SMPROGRAMS\${APP}.lnk" "$INSTDIR\mavboard.exe" "" "$INSTDIR\mavboard.exe" 0

  ; .pgn files open in mavboard (SHCTX: HKCU per user, HKLM machine-wide). The previous owner of .pgn is
  ; kept, and given back on uninstall.
  ReadRegStr $0 SHCTX "Software\Classes\.pgn" ""
  ${If} $0 != ""
  ${AndIf} $0 != "${PGN_CLASS}"
    WriteRegStr SHCTX "${UNINSTALL_KEY}" "PreviousPgnClass" "$0"
  ${EndIf}
  WriteRegStr SHCTX "Software\Classes\.pgn" "" "${PGN_CLASS}"
  WriteRegStr SHCTX "Software\Classes\.pgn" "Content Type" "application/x-chess-pgn"
  WriteRegStr SHCTX "Software\Classes\.pgn\OpenWithProgids" "${PGN_CLASS}" ""
  WriteRegStr SHCTX "Software\Classes\${PGN_CLASS}" "" "PGN game"
  WriteRegStr SHCTX "Software\Classes\${PGN_CLASS}\DefaultIcon" "" "$INSTDIR\mavboard.exe,0"
  WriteRegStr SHCTX "Software\Classes\${PGN_CLASS}\shell\open\command" "" '"$INSTDIR\mavboard.exe" "%1"'

  WriteRegStr SHCTX "${UNINSTALL_KEY}" "DisplayName" "${APP}"
  WriteRegStr SHCTX "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr SHCTX "${UNINSTALL_KEY}" "Publisher" "mavboard developers"
  WriteRegStr SHCTX "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr SHCTX "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\mavboard.exe"
  WriteRegStr SHCTX "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr SHCTX "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD SHCTX "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD SHCTX "${UNINSTALL_KEY}" "NoRepair" 1
  WriteRegDWORD SHCTX "${UNINSTALL_KEY}" "AllUsers" $AllUsers
  ${GetSize} "$INSTDIR" "/S=0K" $0 $1 $2
  IntFmt $0 "0x%08X" $0
  WriteRegDWORD SHCTX "${UNINSTALL_KEY}" "EstimatedSize" "$0"

  ; Tell Explorer that file associations changed (SHCNE_ASSOCCHANGED).
  System::Call 'shell32::SHChangeNotify(i 0x08000000, i 0, p 0, p 0)'
SectionEnd

Function un.onInit
  SetRegView 64
  ; Machine-wide when HKLM names this folder as its install location.
  ReadRegStr $0 HKLM "${UNINSTALL_KEY}" "InstallLocation"
  ${If} $0 == $INSTDIR
    SetShellVarContext all
  ${Else}
    SetShellVarContext current
  ${EndIf}
FunctionEnd

Section "Uninstall"
  Delete "$SMPROGRAMS\${APP}.lnk"

  ReadRegStr $0 SHCTX "Software\Classes\.pgn" ""
  ${If} $0 == "${PGN_CLASS}"
    ReadRegStr $1 SHCTX "${UNINSTALL_KEY}" "PreviousPgnClass"
    ${If} $1 != ""
      WriteRegStr SHCTX "Software\Classes\.pgn" "" "$1"
    ${Else}
      DeleteRegValue SHCTX "Software\Classes\.pgn" ""
    ${EndIf}
  ${EndIf}
  DeleteRegValue SHCTX "Software\Classes\.pgn\OpenWithProgids" "${PGN_CLASS}"
  DeleteRegKey /ifempty SHCTX "Software\Classes\.pgn\OpenWithProgids"
  DeleteRegValue SHCTX "Software\Classes\.pgn" "Content Type"
  DeleteRegKey /ifempty SHCTX "Software\Classes\.pgn"
  DeleteRegKey SHCTX "Software\Classes\${PGN_CLASS}"
  DeleteRegKey SHCTX "${UNINSTALL_KEY}"

  !include "${FILELIST}"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"

  System::Call 'shell32::SHChangeNotify(i 0x08000000, i 0, p 0, p 0)'
SectionEnd
