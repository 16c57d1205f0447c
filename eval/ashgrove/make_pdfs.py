#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/ashgrove/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["ashgrove/dental-care-guide"] = (
    "Dental care guide and price list",
    "Ashgrove Veterinary Group - Dental care guide and price list - April 2026",
    """
# Dental care for dogs, cats and rabbits
Ashgrove Veterinary Group - client guide and price list
Prices from 1 April 2026, including VAT at 20%.

1. WHY DENTAL CARE MATTERS
Most dogs and cats over the age of three have some dental disease. Early
signs are bad breath, red gums and yellow-brown tartar on the teeth. Left
untreated, dental disease is painful and can lead to tooth loss and
infection. Rabbits' teeth grow all their lives, so their diet and regular
checks are just as important.

2. FREE DENTAL CHECKS
A nurse dental check is free for every Ashgrove client, whether or not your
pet is on the Pet Health Plan. The nurse will look at your pet's teeth,
give your pet a dental grade from 1 to 4 and show you how to brush them.

3. DENTAL GRADES AND PRICES
Your vet confirms the grade under anaesthetic. The prices below include the
anaesthetic, scale and polish, dental charting and pain relief to go home.
Extractions and dental X-rays are included in the grade price.

Grade   What it means                       Dog          Cat
1       Tartar, healthy gums                GBP 365      GBP 335
2       Gingivitis, no tooth loss           GBP 495      GBP 450
3       Some teeth loose or damaged         GBP 720      GBP 640
4       Severe disease, many extractions    GBP 980*     GBP 860*
* Grade 4 prices are a guide only. Your vet will give you an estimate for
  the likely number of extractions before the procedure.

Pre-anaesthetic blood test (recommended for pets over 7):  GBP 72
Overnight stay if needed:                                  GBP 95
<<PAGE>>
4. RABBIT DENTAL CARE
Rabbit dental treatment under sedation or anaesthetic (burring of
overgrown teeth) costs GBP 210. Many rabbits with dental disease need this
every 6 to 12 weeks. Rabbits should eat mostly hay or grass: a pile of hay
about the size of their own body every day.

5. ON THE DAY
- No food after 8pm the night before. Water is fine until you leave home.
- Rabbits should NOT be starved. Bring some of their usual food with you.
- Admission is between 8am and 9am at your branch. Most pets go home the
  same afternoon, from 3pm.
- You will get a copy of your pet's dental chart when you collect them.

6. PET HEALTH PLAN AND INSURANCE
Pet Health Plan discounts apply to all the dental prices in this guide.
Most pet insurance policies only cover dental treatment after an accident,
or if your pet had a dental check in the last 12 months and followed the
vet's advice. Check your policy before booking.

7. BRUSHING AT HOME
Brushing once a day is the best way to keep teeth healthy. Use a pet
toothpaste (never human toothpaste, which can contain xylitol) and a soft
brush. Our nurses sell a starter kit at reception for GBP 9.50. Dental
chews help, but they are not a replacement for brushing.

Questions? Call your branch or the Client Support team on 0113 496 0150.
Ashgrove Veterinary Group Ltd, 14 Kenbury Road, Leeds LS6 9QT. Our prices
are reviewed every April and may change. Please ask for an up-to-date esti-
mate before booking any procedure.
""",
)

DOCS["voltline/ev-charger-rebate-guide"] = (
    "Home EV charger rebates: program guide",
    "Voltline Energy - Home EV Charger Rebate Program - program guide - January 2026",
    """
# Home EV Charger Rebate Program
Voltline Energy Inc. - program guide for residential customers
Applications received on or after January 5, 2026.

1. WHAT YOU CAN GET
Voltline pays rebates to residential customers who install a Level 2
(240-volt) charger at home and enrol in our EV Overnight plan. Rebates are
paid as a credit on your Voltline bill, not by cheque.

Item                                   Rebate          Conditions
Level 2 charger (networked)            $500            Must be ENERGY STAR
                                                       certified and on our
                                                       eligible list
Level 2 charger (non-networked)        $250            Must be certified
                                                       by CSA or cUL
Load management device                 $300            Needed when your
or smart panel                                         panel is 100 A
Electrical permit fee                  up to $150      Copy of permit
                                                       required
Maximum per home                       $950

Only one charger rebate is paid per service address in any 5-year period.

2. WHO IS ELIGIBLE
- You have an active Voltline residential account at the address where
  the charger is installed.
- You enrol in EV Overnight within 30 days of installation and stay on it
  for at least 12 months.
- The charger was installed by a licensed electrical contractor, and the
  electrical permit has passed inspection.
- The charger was bought new, on or after January 5, 2026.
<<PAGE>>
3. HOW TO APPLY
Apply online at voltline.example/ev-rebates within 90 days of the date of
your final electrical inspection. Have these ready:
- your Voltline account number (10 digits, starting with 7);
- the charger invoice showing make, model and serial number;
- the electrician's invoice and the inspection certificate;
- a photo of the installed charger showing the serial number label.

We review applications within 15 business days. If anything is missing we
will email you, and you have 30 days to send it. Approved rebates appear
as a credit on your bill within 2 billing cycles.

4. IF YOU LEAVE EV OVERNIGHT EARLY
If you leave EV Overnight, or close your Voltline account, within 12
months of the rebate being credited, we will recover part of the rebate:
1/12 of it for each full month remaining. This does not apply if you move
and take Voltline service with you to your new home.

5. QUESTIONS
EV Support team: 1-888-555-0177, Monday to Friday, 9 a.m. to 5 p.m. ET.
Email evsupport@voltline.example. Program funds are limited; Voltline may
close or change the program with 30 days' notice on our website. Rebates
may be taxable; we issue no tax slips for rebates under $500. Voltline
Energy Inc. is a licensed electricity retailer. See the Terms of Service
for your electricity contract.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "ashgrove make_pdfs.py")


if __name__ == "__main__":
    main()
